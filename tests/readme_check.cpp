// Checks that every ```cpp block of README.md appears verbatim in
// examples/readme.cpp between "readme:begin NAME" and "readme:end" (with the
// block's common indentation removed), so the README's code is code that
// builds and runs. Usage: untold_readme_check README.md examples/readme.cpp
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<std::string> lines_of(const char* path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string dedent(const std::vector<std::string>& lines) {
  std::size_t indent = std::string::npos;
  for (const auto& l : lines)
    if (l.find_first_not_of(' ') != std::string::npos) indent = std::min(indent, l.find_first_not_of(' '));
  std::string out;
  for (const auto& l : lines) out += (l.size() >= indent ? l.substr(indent) : std::string()) + "\n";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: untold_readme_check README.md examples/readme.cpp\n");
    return 2;
  }
  std::set<std::string> snippets;
  std::vector<std::string> current;
  bool inside = false;
  for (const auto& l : lines_of(argv[2])) {
    if (l.find("// readme:begin") != std::string::npos) inside = true, current.clear();
    else if (l.find("// readme:end") != std::string::npos) inside = false, snippets.insert(dedent(current));
    else if (inside) current.push_back(l);
  }
  int blocks = 0, failed = 0;
  inside = false;
  for (const auto& l : lines_of(argv[1])) {
    if (!inside && l == "```cpp") inside = true, current.clear();
    else if (inside && l == "```") {
      inside = false;
      ++blocks;
      if (!snippets.contains(dedent(current))) {
        ++failed;
        std::fprintf(stderr, "README.md C++ block %d is not a snippet of %s:\n%s\n", blocks, argv[2],
                     dedent(current).c_str());
      }
    } else if (inside) current.push_back(l);
  }
  if (blocks == 0) {
    std::fprintf(stderr, "no ```cpp block found in %s\n", argv[1]);
    return 1;
  }
  std::printf("%d passed, %d failed\n", blocks - failed, failed);
  return failed == 0 ? 0 : 1;
}
