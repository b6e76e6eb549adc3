// lease_validity (off by default): a lease holder acts as leader only
// within the lease the store granted it, shortened by the margin it
// declares (vocab::kLeaseMargin). Judged directly, on every leader claim
// and every decision to write (write_begin, where a leader checks it may
// still act), not only when a second holder happens to overlap:
//
// - the store must have granted the node the lease named by the action's
//   token (lease.grant), and not ended it since (lease.end);
// - on the node's own monotonic clock (the records' local times), the
//   action must come less than margin × TTL after the node sent the
//   latest request of its own that the store granted for that lease
//   (lease.request, paired with lease.grant by request id).
//
// The first is the store's word against the holder's action, in real time;
// the second is the holder's rule, measured on its clock from its own
// send, so drift within the margin's bound never trips it and a holder that
// counts from the reply, forgets the margin or keeps acting after a pause
// does. What happens to a write after its decision (write_duration, the
// network) is the fencing token's business (stale_token).
//
// Only nodes that declare a margin are judged: an algorithm without leases
// (or with leases of another kind, as ZooKeeper's sessions) never is.
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "checkers/factories.h"
#include "electsim/vocab/vocabulary.h"
#include "fmt/format.h"
#include "sim/format.h"

namespace checkers {
namespace {

constexpr int64_t kPpm = 1000000;
// Requests remembered per process: far more than can be in flight at once.
constexpr size_t kRequestsKept = 1024;

class LeaseValidityChecker final : public Checker {
 public:
  void Renew(const CheckerConfig& config) override { RenewInPlace(this, config); }
  explicit LeaseValidityChecker(const CheckerConfig& config) : nodes_(config.node_count) {}

  std::string_view name() const override { return "lease_validity"; }
  sim::TraceKinds kinds() const override { return {sim::TraceKind::kCrash, sim::TraceKind::kObserve}; }
  sim::ObservationTypes observation_types() const override {
    return {&vocab::kLeaseMargin, &vocab::kLeaseRequest, &vocab::kLeaseGrant,
            &vocab::kLeaseEnd,    &vocab::kRoleChange,   &vocab::kWriteBegin};
  }

  void OnRecord(const sim::TraceRecord& r) override {
    if (violation()) return;
    const bool election_node = r.node.value() < nodes_.size();
    if (r.kind == sim::TraceKind::kCrash) {
      if (election_node) nodes_[r.node.value()].sent.clear();  // its requests' replies go to nobody now
      return;
    }
    if (r.payload == nullptr) return;
    const sim::Observation& o = *r.payload;
    if (const auto grant = o.As<vocab::LeaseGranted>()) {
      Granted(*grant);
    } else if (const auto end = o.As<vocab::LeaseEnded>()) {
      ended_.insert_or_assign({end->token, end->holder}, r.time);
    } else if (!election_node) {
      return;
    } else if (const auto margin = o.As<vocab::LeaseMarginDeclared>()) {
      nodes_[r.node.value()].margin_ppm = margin->margin;
    } else if (const auto request = o.As<vocab::LeaseRequested>()) {
      std::map<int64_t, sim::TimeNs>& sent = nodes_[r.node.value()].sent;
      sent[request->req] = r.local_time;
      // Ids grow: the oldest requests were answered (or lost) long ago.
      if (sent.size() > kRequestsKept) sent.erase(sent.begin());
    } else if (const auto role = o.As<vocab::RoleChanged>()) {
      if (role->role == static_cast<int64_t>(vocab::Role::kLeader) && o.size() > 2) Acted(r, role->token, "claimed");
    } else if (const auto write = o.As<vocab::WriteBegun>()) {
      Acted(r, write->token, "decided to write");
    }
  }

 private:
  struct Node {
    std::optional<int64_t> margin_ppm;
    std::map<int64_t, sim::TimeNs> sent;  // request id -> local send time, this process
  };
  // The latest grant of one lease to one holder.
  struct Lease {
    sim::TimeNs sent_local;  // of the request it answered, on the holder's clock
    sim::TimeNs ttl;
  };

  void Granted(const vocab::LeaseGranted& grant) {
    if (grant.holder < 0 || static_cast<uint64_t>(grant.holder) >= nodes_.size()) return;
    const Node& holder = nodes_[grant.holder];
    const auto sent = holder.sent.find(grant.req);
    if (sent == holder.sent.end()) return;  // a request of an earlier process: no clock to measure on
    const auto [it, inserted] =
        leases_.try_emplace({grant.token, grant.holder}, Lease{sent->second, sim::TimeNs(grant.ttl)});
    if (!inserted && sent->second > it->second.sent_local) it->second = Lease{sent->second, sim::TimeNs(grant.ttl)};
    ended_.erase({grant.token, grant.holder});
  }

  void Acted(const sim::TraceRecord& r, int64_t token, std::string_view action) {
    const Node& node = nodes_[r.node.value()];
    if (!node.margin_ppm) return;
    const int64_t holder = r.node.value();
    const auto lease = leases_.find({token, holder});
    std::string wrong;
    if (lease == leases_.end()) {
      wrong = fmt::format("the store never granted it lease {}", token);
    } else if (const auto ended = ended_.find({token, holder}); ended != ended_.end()) {
      wrong = fmt::format("the store ended that lease at {}", sim::FormatSeconds(ended->second));
    } else {
      const sim::TimeNs allowed(
          static_cast<int64_t>(static_cast<__int128>(lease->second.ttl.ns()) * *node.margin_ppm / kPpm));
      const sim::TimeNs elapsed = r.local_time - lease->second.sent_local;
      if (elapsed < allowed) return;
      wrong = fmt::format(
          "{} on its own clock after sending the last request the store granted, and its margin "
          "allows {}",
          sim::FormatDuration(elapsed), sim::FormatDuration(allowed));
    }
    Report({.time = r.time,
            .trace_index = r.index,
            .nodes = {r.node},
            .token = token,
            .message = fmt::format("node {} {} under lease {}, but {}", holder, action, token, wrong)});
  }

  std::vector<Node> nodes_;
  std::map<std::pair<int64_t, int64_t>, Lease> leases_;       // (token, holder) -> latest grant
  std::map<std::pair<int64_t, int64_t>, sim::TimeNs> ended_;  // (token, holder) -> when the store ended it
};

}  // namespace

std::unique_ptr<Checker> MakeLeaseValidityChecker(const CheckerConfig& config) {
  return std::make_unique<LeaseValidityChecker>(config);
}

}  // namespace checkers
