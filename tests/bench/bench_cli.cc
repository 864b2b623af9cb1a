#include "tests/bench/bench_cli.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace skald::bench {

bool ParseFlags(
    int argc, char** argv, const char* program,
    const std::function<bool(const std::string& flag, const std::string& value)>& take) {
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      std::cerr << program << ": " << flag << " needs a value\n";
      return false;
    }
    if (!take(flag, argv[i + 1])) {
      std::cerr << program << ": unknown argument '" << flag << "'\n";
      return false;
    }
  }
  return true;
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

std::vector<int> IntList(const std::string& s) {
  std::vector<int> out;
  for (const std::string& part : SplitList(s)) out.push_back(std::stoi(part));
  return out;
}

std::vector<std::pair<int, int>> WorkloadList(const std::string& s, const std::string& flag) {
  std::vector<std::pair<int, int>> out;
  for (const std::string& r : SplitList(s)) {
    const auto x = r.find('x');
    if (x == std::string::npos) {
      throw std::invalid_argument(flag + " wants NxM[,NxM...], not '" + s + "'");
    }
    out.emplace_back(std::stoi(r.substr(0, x)), std::stoi(r.substr(x + 1)));
  }
  return out;
}

void WriteJson(const nlohmann::json& out, const std::string& path) {
  if (!path.empty()) {
    std::ofstream(path) << out.dump(2) << "\n";
  } else {
    std::cout << out.dump(2) << "\n";
  }
}

int RunMain(const char* program, int (*bench_main)(int, char**), int argc, char** argv) {
  try {
    return bench_main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace skald::bench
