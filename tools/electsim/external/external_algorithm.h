// Algorithms whose nodes are external processes speaking the step protocol
// (docs/step-protocol.md), declared by JSON manifests: etcd's raft wrapped in
// Go (algorithms/etcd-raft), the Python reference client (examples/step-protocol),
// or anyone's. Each manifest becomes one algorithms::Algorithm, registered
// next to the built-in ones, so every command runs it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "electsim/algorithms/algorithm.h"

namespace electsim::external {

// Reads the manifest at `path`. InvalidArgument names the file, the JSON
// path and what was expected. The algorithm lives as long as the program (the
// registry holds it, and its record types name strings it owns).
absl::StatusOr<const algorithms::Algorithm*> LoadManifest(const std::string& path);

// The manifests electsim registers at start: every *.json in the
// `algorithms.d` directory beside the running program, in name order, then
// each file of the colon-separated list in $ELECTSIM_ALGORITHMS.
std::vector<std::string> ManifestPaths();

// Loads and registers every manifest of ManifestPaths(). Call it before
// anything reads the registry.
absl::Status RegisterExternalAlgorithms();

}  // namespace electsim::external
