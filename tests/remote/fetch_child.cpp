// A second process for the cache tests: fetches URLs into a shared cache.
//
//   untold_remote_fetch_child --cache DIR --ca FILE [--budget BYTES] URL...
//
// Prints one line per URL ("<outcome> <url>" or "error <description>") and
// exits 0 when every fetch succeeded.
#include <untold/remote/remote.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  untold::remote::downloader_options o;
  o.client.use_env_proxy = false;
  o.retry.initial_delay = std::chrono::milliseconds(10);
  o.request_timeout = std::chrono::milliseconds(20'000);
  o.resource_timeout = std::chrono::milliseconds(60'000);
  o.prefetch_textures = false;
  std::vector<std::string> urls;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cache" && i + 1 < argc) {
      o.cache_dir = argv[++i];
    } else if (a == "--ca" && i + 1 < argc) {
      o.client.ca_file = argv[++i];
    } else if (a == "--budget" && i + 1 < argc) {
      o.cache_budget = std::strtoull(argv[++i], nullptr, 10);
    } else {
      urls.push_back(a);
    }
  }
  auto dl = untold::remote::downloader::create(o);
  if (!dl) {
    std::printf("error %s\n", dl.error().describe().c_str());
    return 2;
  }
  int failed = 0;
  for (const std::string& url : urls) {
    auto r = (*dl)->fetch(url);
    if (r) {
      std::printf("%s %s\n", std::string(untold::remote::name(r->outcome)).c_str(), url.c_str());
    } else {
      std::printf("error %s\n", r.error().describe().c_str());
      ++failed;
    }
    std::fflush(stdout);
  }
  return failed == 0 ? 0 : 1;
}
