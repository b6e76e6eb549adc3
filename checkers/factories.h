// One factory per checker; each lives in its own .cc file next to its class.
#pragma once

#include <memory>

#include "checkers/checker.h"

namespace checkers {

using CheckerFactory = std::unique_ptr<Checker> (*)(const CheckerConfig&);
// One instance of `make`'s checker per key (CheckerConfig::per_key).
std::unique_ptr<Checker> MakePerKeyChecker(CheckerFactory make, const CheckerConfig& config);

std::unique_ptr<Checker> MakeCommittedAgreementChecker(const CheckerConfig& config);
std::unique_ptr<Checker> MakeDeclaredWinnerChecker(const CheckerConfig& config);
std::unique_ptr<Checker> MakeDisruptionChecker(const CheckerConfig& config);
std::unique_ptr<Checker> MakeElectionSafetyChecker(const CheckerConfig& config);
std::unique_ptr<Checker> MakeLeaderCompletenessChecker(const CheckerConfig& config);
std::unique_ptr<Checker> MakeLeaseValidityChecker(const CheckerConfig& config);
std::unique_ptr<Checker> MakeLivenessChecker(const CheckerConfig& config);
std::unique_ptr<Checker> MakeOwnerDisplacedChecker(const CheckerConfig& config);
std::unique_ptr<Checker> MakeSingleLeaderChecker(const CheckerConfig& config);
std::unique_ptr<Checker> MakeSingleVoteChecker(const CheckerConfig& config);
std::unique_ptr<Checker> MakeStaleTokenChecker(const CheckerConfig& config);
std::unique_ptr<Checker> MakeTermMonotonicChecker(const CheckerConfig& config);
std::unique_ptr<Checker> MakeUniqueTokenChecker(const CheckerConfig& config);

}  // namespace checkers
