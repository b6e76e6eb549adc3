// stale_token: the shared resource never accepts a write whose fencing token
// is lower than a token it already accepted. The maximum is rebuilt from the
// accept stream itself; the record's "highest" field is the resource's own
// claim and is not trusted. A token equal to the maximum is fine (the same
// leader writing again).
#include <map>

#include "checkers/factories.h"
#include "checkers/resource_record.h"
#include "fmt/format.h"

namespace checkers {
namespace {

class StaleTokenChecker final : public Checker {
 public:
  void Renew(const CheckerConfig& config) override { RenewInPlace(this, config); }
  explicit StaleTokenChecker(const CheckerConfig&) {}

  std::string_view name() const override { return "stale_token"; }
  // The resource's accepted writes.
  sim::TraceKinds kinds() const override { return {sim::TraceKind::kObserve}; }
  sim::ObservationTypes observation_types() const override { return {&vocab::kResourceAccept}; }

  void OnRecord(const sim::TraceRecord& r) override {
    const std::optional<AcceptedWrite> write = AcceptedWriteOf(r);
    if (!write) return;
    const auto [resource, token, writer] = *write;
    auto [it, inserted] = highest_by_resource_.try_emplace(resource, Accepted{token, writer});
    if (inserted) return;
    Accepted& highest = it->second;
    if (token >= highest.token) {
      highest = Accepted{token, writer};
      return;
    }
    std::vector<sim::NodeId> nodes = {writer};
    if (highest.writer != writer) nodes.push_back(highest.writer);
    Report({.time = r.time,
            .trace_index = r.index,
            .nodes = std::move(nodes),
            .token = token,
            .message = fmt::format("the resource accepted token {} from node {} after already accepting token {} "
                                   "from node {}",
                                   token, writer.value(), highest.token, highest.writer.value())});
  }

 private:
  struct Accepted {
    int64_t token = 0;
    sim::NodeId writer;
  };
  // Highest token each resource accepted, and who wrote it.
  std::map<uint32_t, Accepted> highest_by_resource_;
};

}  // namespace

std::unique_ptr<Checker> MakeStaleTokenChecker(const CheckerConfig& config) {
  return std::make_unique<StaleTokenChecker>(config);
}

}  // namespace checkers
