// electsim-schema: writes the registry-generated definitions (algorithms,
// their options, checkers) into scenario.schema.json, or with --check only
// reports whether the file is current.
//   build/tools/electsim-schema scenarios/schema/scenario.schema.json
//   build/tools/electsim-schema --check scenarios/schema/scenario.schema.json
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "tools/electsim/io/output_file.h"
#include "tools/electsim/language/schema_registry.h"

int main(int argc, char** argv) {
  const bool check = argc == 3 && std::string(argv[1]) == "--check";
  if (argc != 2 && !check) {
    std::cerr << "usage: electsim-schema [--check] scenarios/schema/scenario.schema.json\n";
    return 2;
  }
  const std::string path = argv[argc - 1];
  std::ifstream in(path);
  if (!in) {
    std::cerr << "electsim-schema: " << path << ": cannot open\n";
    return 2;
  }
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::ordered_json schema;
  try {
    schema = nlohmann::ordered_json::parse(text.str());
  } catch (const nlohmann::json::exception& error) {
    std::cerr << "electsim-schema: " << path << ": " << error.what() << "\n";
    return 2;
  }
  const std::string updated = electsim::WithRegistryDefinitions(schema).dump(2) + "\n";
  if (updated == text.str()) return 0;
  if (check) {
    std::cerr << "electsim-schema: " << path << " is out of date; run build/tools/electsim-schema " << path << "\n";
    return 1;
  }
  if (auto status = electsim::WriteFileAtomically(path, updated); !status.ok()) {
    std::cerr << "electsim-schema: " << status.message() << "\n";
    return 3;
  }
  std::cout << "updated " << path << "\n";
  return 0;
}
