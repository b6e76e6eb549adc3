#include "tools/guarantees/counterexamples.h"

#include <algorithm>

#include "fmt/format.h"
#include "tools/electsim/engine/fault_templates.h"
#include "tools/electsim/engine/fuzz_judge.h"

namespace electsim {
namespace {

using algorithms::FaultKind;
using algorithms::FaultKinds;

const algorithms::Guarantee* Find(const algorithms::Guarantees& guarantees, std::string_view invariant) {
  for (const algorithms::Guarantee& g : guarantees) {
    if (g.invariant == invariant) return &g;
  }
  return nullptr;
}

bool Declared(const algorithms::Guarantees& guarantees, const std::string& invariant, FaultKinds kinds) {
  const algorithms::Guarantee* g = Find(guarantees, invariant);
  return g != nullptr && g->kept_under.Covers(kinds);
}

bool SameTable(const algorithms::Guarantees& a, const algorithms::Guarantees& b) {
  for (const std::string& invariant : SafetyCheckers()) {
    const algorithms::Guarantee* ga = Find(a, invariant);
    const algorithms::Guarantee* gb = Find(b, invariant);
    if ((ga == nullptr) != (gb == nullptr)) return false;
    if (ga != nullptr && !(ga->kept_under == gb->kept_under)) return false;
  }
  return true;
}

// The variants whose tables `electsim list` prints.
std::vector<GuaranteeVariant> TabledVariants(const algorithms::Algorithm& algorithm) {
  std::vector<GuaranteeVariant> variants = GuaranteeVariants(algorithm);
  const algorithms::Guarantees defaults = algorithm.guarantees(variants.front().values);
  std::vector<GuaranteeVariant> out = {variants.front()};
  for (auto it = variants.begin() + 1; it != variants.end(); ++it) {
    const algorithms::Guarantees guarantees = algorithm.guarantees(it->values);
    if (!guarantees.empty() && !SameTable(guarantees, defaults)) out.push_back(*it);
  }
  return out;
}

// Whether the scenario runs with the variant's boolean and choice options.
bool RunsVariant(const algorithms::Algorithm& algorithm, const GuaranteeVariant& variant,
                 const algorithms::OptionValues& options) {
  for (const algorithms::OptionSpec& spec : algorithm.options()) {
    if (spec.type != algorithms::OptionType::kBool && spec.type != algorithms::OptionType::kChoice) continue;
    if (options.Int(spec.name) != variant.values.Int(spec.name)) return false;
  }
  return true;
}

// "none", then every fault kind: a table's columns.
std::vector<std::optional<FaultKind>> Columns() {
  std::vector<std::optional<FaultKind>> columns = {std::nullopt};
  for (FaultKind kind : algorithms::AllFaultKinds()) columns.emplace_back(kind);
  return columns;
}

}  // namespace

std::string TableCell::column() const { return kind ? std::string(algorithms::FaultKindName(*kind)) : "none"; }

FaultKinds TableCell::kinds() const { return kind ? FaultKinds{*kind} : FaultKinds(); }

FaultKinds TableCell::allowed() const {
  const algorithms::Guarantee* g = Find(algorithm->guarantees(variant.values), invariant);
  return (g == nullptr ? FaultKinds() : g->kept_under).With(kinds());
}

bool TableCell::Backs(FaultKinds in_play) const { return in_play.Covers(kinds()) && allowed().Covers(in_play); }

std::string TableCell::stem() const {
  return fmt::format("{}{}{}-{}-{}", algorithm->name(), variant.slug.empty() ? "" : "-", variant.slug, invariant,
                     column());
}

std::vector<TableCell> UndeclaredCells() {
  std::vector<TableCell> cells;
  for (const algorithms::Algorithm* algorithm : algorithms::AllAlgorithms()) {
    for (const GuaranteeVariant& variant : TabledVariants(*algorithm)) {
      const algorithms::Guarantees guarantees = algorithm->guarantees(variant.values);
      for (const std::string& invariant : SafetyCheckers()) {
        for (const std::optional<FaultKind>& kind : Columns()) {
          TableCell cell{algorithm, variant, invariant, kind};
          if (!Declared(guarantees, invariant, cell.kinds())) cells.push_back(std::move(cell));
        }
      }
    }
  }
  return cells;
}

absl::StatusOr<TableCell> CellOfCounterexample(const std::string& stem, const Repro& repro) {
  const algorithms::Algorithm& algorithm = *repro.scenario.algorithm;
  for (const GuaranteeVariant& variant : TabledVariants(algorithm)) {
    if (!RunsVariant(algorithm, variant, repro.scenario.options)) continue;
    for (const std::string& invariant : SafetyCheckers()) {
      for (const std::optional<FaultKind>& kind : Columns()) {
        TableCell cell{&algorithm, variant, invariant, kind};
        if (cell.stem() == stem) return cell;
      }
    }
  }
  return absl::InvalidArgumentError(
      fmt::format("{}: names no cell of a table of {} with the options it runs with", stem, algorithm.name()));
}

absl::Status CheckCounterexampleShape(const TableCell& cell, const Repro& repro) {
  const FaultKinds in_play = FaultKindsInPlay(repro.scenario);
  if (!cell.Backs(in_play)) {
    return absl::FailedPreconditionError(fmt::format("{}: its faults are not of kind {} and kinds {} is kept under",
                                                     cell.stem(), cell.column(), cell.invariant));
  }
  if (Declared(repro.scenario.algorithm->guarantees(repro.scenario.options), cell.invariant, in_play)) {
    return absl::FailedPreconditionError(
        fmt::format("{}: {} is declared kept under {} with its options", cell.stem(), cell.invariant, cell.column()));
  }
  if (repro.scenario.checkers != std::vector<std::string>{cell.invariant}) {
    return absl::FailedPreconditionError(fmt::format("{}: it must run {} alone", cell.stem(), cell.invariant));
  }
  return absl::OkStatus();
}

}  // namespace electsim
