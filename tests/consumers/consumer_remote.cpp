// A downstream program of untold::remote (COMPONENTS remote): parses a tile
// URL and resolves a tile path against it, offline.
#include <untold/remote/remote.hpp>

#include <cstdio>

int main() {
  auto url = untold::remote::parse_url("https://cdn.example.com/scene/manifest.json");
  if (!url) {
    std::printf("%s\n", url.error().describe().c_str());
    return 2;
  }
  std::printf("consumer_remote ok: authority %s\n", url->authority.c_str());
  return 0;
}
