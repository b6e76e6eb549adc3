// owner_displaced: no node's request deletes or overwrites a key another node
// holds. The classic lock bug of TTL leases: an owner stalls past its TTL,
// the key expires and a successor takes it, and the old owner's plain unlock
// (a delete not conditioned on the version it acquired) then deletes the
// successor's lock, leaving the key free while its owner still acts on it.
// The evidence is the store's own record (vocab::kKeyTaken), written for each
// such request with the requester as the network delivered it: no client
// reports it. A store expiring a lease, or an owner releasing its own, is
// not one.
#include "checkers/factories.h"
#include "fmt/format.h"

namespace checkers {
namespace {

class OwnerDisplacedChecker final : public Checker {
 public:
  void Renew(const CheckerConfig& config) override { RenewInPlace(this, config); }
  explicit OwnerDisplacedChecker(const CheckerConfig&) {}

  std::string_view name() const override { return "owner_displaced"; }
  sim::TraceKinds kinds() const override { return {sim::TraceKind::kObserve}; }
  sim::ObservationTypes observation_types() const override { return {&vocab::kKeyTaken}; }

  void OnRecord(const sim::TraceRecord& r) override {
    if (r.payload == nullptr) return;
    const std::optional<vocab::KeyTaken> taken = r.payload->As<vocab::KeyTaken>();
    if (!taken) return;
    const auto node = [](int64_t id) { return sim::NodeId(static_cast<uint32_t>(id)); };
    std::vector<sim::NodeId> nodes = {node(taken->by)};
    if (taken->holder >= 0) nodes.push_back(node(taken->holder));
    Report({.time = r.time,
            .trace_index = r.index,
            .nodes = std::move(nodes),
            .token = taken->token,
            .message = fmt::format("a request of node {} {} key {} while node {} held it under lease {}", taken->by,
                                   taken->how == vocab::kKeyTakenByOverwrite ? "overwrote" : "deleted", taken->key,
                                   taken->holder, taken->token)});
  }
};

}  // namespace

std::unique_ptr<Checker> MakeOwnerDisplacedChecker(const CheckerConfig& config) {
  return std::make_unique<OwnerDisplacedChecker>(config);
}

}  // namespace checkers
