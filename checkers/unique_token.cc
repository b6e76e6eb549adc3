// unique_token: a fencing token identifies one holder, so the resource never
// accepts writes from two different nodes under the same token. Bully and
// Ring use their epoch as the token; after a partition two leaders of one
// epoch hold the same one, and a resource that accepts any token at least
// as high as the highest it has seen (Kleppmann's fencing storage) lets both
// write. stale_token compares tokens only and cannot see it. The evidence is
// the resource's own record of what it accepted, with the writer as the
// network delivered it: no algorithm reports it.
#include <map>
#include <utility>

#include "checkers/factories.h"
#include "checkers/resource_record.h"
#include "fmt/format.h"

namespace checkers {
namespace {

class UniqueTokenChecker final : public Checker {
 public:
  void Renew(const CheckerConfig& config) override { RenewInPlace(this, config); }
  explicit UniqueTokenChecker(const CheckerConfig&) {}

  std::string_view name() const override { return "unique_token"; }
  // The resource's accepted writes.
  sim::TraceKinds kinds() const override { return {sim::TraceKind::kObserve}; }
  sim::ObservationTypes observation_types() const override { return {&vocab::kResourceAccept}; }

  void OnRecord(const sim::TraceRecord& r) override {
    const std::optional<AcceptedWrite> write = AcceptedWriteOf(r);
    if (!write) return;
    const auto [resource, token, writer] = *write;
    auto [it, inserted] = first_writer_.try_emplace({resource, token}, writer);
    if (inserted || it->second == writer) return;
    Report({.time = r.time,
            .trace_index = r.index,
            .nodes = {it->second, writer},
            .token = token,
            .message = fmt::format("the resource accepted writes under token {} from both node {} and node {}: a "
                                   "fencing token must identify one holder",
                                   token, it->second.value(), writer.value())});
  }

 private:
  // (resource, token) -> the first writer the resource accepted it from.
  std::map<std::pair<uint32_t, int64_t>, sim::NodeId> first_writer_;
};

}  // namespace

std::unique_ptr<Checker> MakeUniqueTokenChecker(const CheckerConfig& config) {
  return std::make_unique<UniqueTokenChecker>(config);
}

}  // namespace checkers
