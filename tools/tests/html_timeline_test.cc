// The HTML timeline in headless Chromium (Debian's `chromium`, installed by
// tools/setup), opened from disk with the network off. The page reports
// where its key elements landed, in window coordinates (body's
// data-layout); the tests read that back from the DOM at two window sizes
// and check the positions against the run: round ticks over the whole run,
// every fault step labelled inside the window without overlap, partition
// sides shaded over the right interval, nothing clipped. And the page stays
// under 1 MB for any run.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/tests/electsim_command.h"
#include "tools/tests/electsim_process.h"

namespace {

namespace fs = std::filesystem;
using electsim_test::Outcome;
using nlohmann::json;

using electsim_test::CommittedRepro;

// An attribute's value as Chromium serializes it, unescaped.
std::string Unescaped(std::string text) {
  const std::vector<std::pair<std::string, std::string>> entities = {
      {"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&#39;", "'"}, {"&amp;", "&"}};
  for (const auto& [entity, character] : entities) {
    for (size_t at = 0; (at = text.find(entity, at)) != std::string::npos; at += character.size()) {
      text.replace(at, entity.size(), character);
    }
  }
  return text;
}

// A box the page reports: [left, right, top, bottom].
double Left(const json& box) { return box[0].get<double>(); }
double Right(const json& box) { return box[1].get<double>(); }
double Top(const json& box) { return box[2].get<double>(); }
double Bottom(const json& box) { return box[3].get<double>(); }
bool Overlap(const json& a, const json& b) {
  return Left(a) < Right(b) && Left(b) < Right(a) && Top(a) < Bottom(b) && Top(b) < Bottom(a);
}
bool Round(int64_t step) {
  while (step % 10 == 0) step /= 10;
  return step == 1 || step == 2 || step == 5;
}

// Where time t (in microseconds) is drawn, from two tick lines.
struct Scale {
  double x0 = 0;
  double px_per_us = 0;
  double X(double t) const { return x0 + t * px_per_us; }
};

// A partition side the page must shade: node, side, from, to (microseconds).
struct Side {
  int node;
  int side;
  int64_t start;
  int64_t end;
};

class HtmlTimelineTest : public electsim_test::TempDirTest {
 protected:
  void SetUp() override {
    electsim_test::TempDirTest::SetUp();
    ASSERT_EQ(std::system("command -v chromium >/dev/null"), 0) << "chromium is not installed: run tools/setup";
  }
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  std::string Chromium(int width, int height) const {
    return "chromium --headless --no-sandbox --disable-gpu --disable-extensions --no-first-run --hide-scrollbars "
           "--user-data-dir=" +
           (dir_ / "profile").string() + " --proxy-server=127.0.0.1:9 --window-size=" + std::to_string(width) + "," +
           std::to_string(height) + " ";
  }
  // The page of a committed repro's run.
  std::string Page(const std::string& repro) {
    const std::string page = (dir_ / (repro + ".html")).string();
    const Outcome out =
        electsim_test::RunCombined("replay " + CommittedRepro(repro) + " --trace-format html --trace " + page);
    EXPECT_EQ(out.exit_status, 0) << out.output;
    return page;
  }
  std::string Dom(const std::string& page, int width) {
    const std::string dom = (dir_ / "dom.html").string();
    EXPECT_EQ(std::system((Chromium(width, 900) + "--dump-dom file://" + page + " > " + dom + " 2>/dev/null").c_str()),
              0);
    return electsim_test::ReadWholeFile(dom);
  }
  json Layout(const std::string& page, int width) {
    const std::string dom = Dom(page, width);
    const size_t at = dom.find("data-layout=\"");
    if (at == std::string::npos) {
      ADD_FAILURE() << "the page reported no layout: " << dom.substr(0, 600);
      return json::object();
    }
    const size_t begin = at + 13;
    return json::parse(Unescaped(dom.substr(begin, dom.find('"', begin) - begin)));
  }

  // At least five ticks, at a round interval, from 0 across the whole run,
  // their lines on one scale, their labels inside the chart and the window.
  Scale CheckTicks(const json& layout, int64_t end_us, double right) {
    const json& ticks = layout["ticks"];
    EXPECT_GE(ticks.size(), 5u) << layout.dump();
    if (ticks.size() < 2) return {};
    const int64_t step = ticks[1]["t"].get<int64_t>() - ticks[0]["t"].get<int64_t>();
    EXPECT_TRUE(Round(step)) << step;
    const json& last = ticks.back();
    Scale scale{ticks[0]["line"].get<double>(), (last["line"].get<double>() - ticks[0]["line"].get<double>()) /
                                                    static_cast<double>(last["t"].get<int64_t>())};
    for (size_t i = 0; i < ticks.size(); ++i) {
      EXPECT_EQ(ticks[i]["t"].get<int64_t>(), static_cast<int64_t>(i) * step);
      EXPECT_NEAR(ticks[i]["line"].get<double>(), scale.X(ticks[i]["t"].get<double>()), 0.6) << i;
      EXPECT_GE(Left(ticks[i]["label"]), layout["svg"][0].get<double>()) << ticks[i].dump();
      EXPECT_LE(Right(ticks[i]["label"]), right) << "tick label clipped: " << ticks[i].dump();
    }
    EXPECT_GT(last["t"].get<int64_t>() + step, end_us) << "the ticks stop before the end of the run";
    EXPECT_NEAR(scale.X(static_cast<double>(end_us)), right - 16, 2.0) << "the run does not fill the chart";
    return scale;
  }

  // Every fault step labelled, each label at its time, inside the chart and
  // the window, none over another; the labels at nodes likewise.
  void CheckFaultLabels(const json& layout, const Scale& scale, size_t steps, double left, double right) {
    const json& faults = layout["faults"];
    for (size_t i = 0; i < steps; ++i) {
      const std::string path = "/faults/" + std::to_string(i) + ":";
      EXPECT_TRUE(std::any_of(faults.begin(), faults.end(),
                              [&](const json& f) { return f["text"].get<std::string>().rfind(path, 0) == 0; }))
          << path << " has no label: " << faults.dump();
    }
    for (size_t i = 0; i < faults.size(); ++i) {
      const json& box = faults[i]["box"];
      EXPECT_GE(Left(box), left) << faults[i].dump();
      EXPECT_LE(Right(box), right) << "fault label clipped: " << faults[i].dump();
      const double at = scale.X(faults[i]["t"].get<double>());
      EXPECT_TRUE(std::abs(Left(box) - at) <= 3 || Right(box) >= right - 20)
          << "label far from its fault at " << at << ": " << faults[i].dump();
      for (size_t j = i + 1; j < faults.size(); ++j) {
        EXPECT_FALSE(Overlap(box, faults[j]["box"])) << faults[i].dump() << " over " << faults[j].dump();
      }
    }
    const json& marks = layout["marks"];
    for (size_t i = 0; i < marks.size(); ++i) {
      EXPECT_GE(Left(marks[i]["box"]), left) << marks[i].dump();
      EXPECT_LE(Right(marks[i]["box"]), right) << marks[i].dump();
      for (size_t j = i + 1; j < marks.size(); ++j) {
        EXPECT_FALSE(Overlap(marks[i]["box"], marks[j]["box"])) << marks[i].dump() << " over " << marks[j].dump();
      }
    }
  }

  // Each side shaded on its nodes' rows exactly over the partition.
  void CheckSides(const json& layout, const Scale& scale, const std::vector<Side>& expected) {
    const json& sides = layout["sides"];
    ASSERT_EQ(sides.size(), expected.size()) << sides.dump();
    for (size_t i = 0; i < expected.size(); ++i) {
      const json& side = sides[i];
      EXPECT_EQ(side["node"], expected[i].node) << side.dump();
      EXPECT_EQ(side["side"], expected[i].side) << side.dump();
      EXPECT_EQ(side["start"], expected[i].start) << side.dump();
      EXPECT_EQ(side["end"], expected[i].end) << side.dump();
      EXPECT_NEAR(Left(side["box"]), scale.X(static_cast<double>(expected[i].start)), 1.0) << side.dump();
      EXPECT_NEAR(Right(side["box"]), scale.X(static_cast<double>(expected[i].end)), 1.0) << side.dump();
    }
  }

  void CheckPage(const std::string& repro, int64_t end_us, const std::vector<Side>& sides) {
    const std::string page = Page(repro);
    const json doc = json::parse(electsim_test::ReadWholeFile(CommittedRepro(repro)));
    for (const int width : {1400, 800}) {
      SCOPED_TRACE(repro + " at " + std::to_string(width) + "px");
      const json layout = Layout(page, width);
      ASSERT_TRUE(layout.contains("svg"));
      EXPECT_EQ(layout["viewport"], width);
      const double left = layout["svg"][0].get<double>();
      const double right = std::min<double>(layout["svg"][1].get<double>(), width);
      EXPECT_LE(layout["svg"][1].get<double>(), width) << "the chart is wider than the window";
      const Scale scale = CheckTicks(layout, end_us, right);
      CheckFaultLabels(layout, scale, doc["scenario"]["faults"].size(), left, right);
      CheckSides(layout, scale, sides);
    }
  }
};

// Bully's partition: [0,1] and [2,3,4] for the first 4s of 10s.
TEST_F(HtmlTimelineTest, Html_PartitionSidesTicksAndFaultLabelsLandInsideTheWindowAtTwoSizes) {
  CheckPage("bully-partition-split-brain-seed1.repro.json", 10000000,
            {{0, 0, 0, 4000000}, {1, 0, 0, 4000000}, {2, 1, 0, 4000000}, {3, 1, 0, 4000000}, {4, 1, 0, 4000000}});
}

// Eleven fault steps, three at one instant, and an isolation (node 0 alone,
// the others on the other side) from 1s to 1.5s.
TEST_F(HtmlTimelineTest, Html_ManyFaultStepsAreEachLabelledWithoutOverlapAtTwoSizes) {
  CheckPage("raft-bug-commit-previous-term-seed1.repro.json", 4000000,
            {{0, 0, 1000000, 1500000}, {1, 1, 1000000, 1500000}, {2, 1, 1000000, 1500000}});
}

TEST_F(HtmlTimelineTest, Html_RendersNodeRowsAndViolationMarkersInHeadlessChromium) {
  const std::string page = Page("bully-partition-split-brain-seed1.repro.json");
  const std::string html = electsim_test::ReadWholeFile(page);
  EXPECT_EQ(html.find("http://"), std::string::npos) << "the page must not reach the network";
  EXPECT_EQ(html.find("https://"), std::string::npos) << "the page must not reach the network";
  const std::string dom = Dom(page, 1400);
  EXPECT_NE(dom.find("<title>electsim timeline: 6 rows, 3 violations</title>"), std::string::npos)
      << dom.substr(0, 400);
  EXPECT_NE(dom.find("data-rendered=\"rows=6 violation-markers=3\""), std::string::npos) << dom.substr(0, 400);
  for (int row = 0; row < 6; ++row) {
    EXPECT_NE(dom.find("id=\"row-" + std::to_string(row) + "\""), std::string::npos) << row;
  }
  EXPECT_NE(dom.find("class=\"violation-marker\""), std::string::npos);
  const std::string png = (dir_ / "timeline.png").string();
  ASSERT_EQ(std::system((Chromium(1400, 520) + "--screenshot=" + png + " file://" + page + " >/dev/null 2>&1").c_str()),
            0);
  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 10000u);  // a drawn page, not a blank one
}

// The documented bound, on runs far past it: a long split-vote storm (every
// role change a span) is cut where its roles would pass the budget, and a
// long steady run draws its first messages; both say what they left out.
TEST_F(HtmlTimelineTest, Html_PageStaysUnderOneMegabyteAndSaysWhatItLeftOut) {
  for (const std::string& args : {std::string("raft-split-votes.json --set nodes=9 --set duration=600s"),
                                  std::string("bully-partition-split-brain.json --set nodes=9 --set duration=120s")}) {
    SCOPED_TRACE(args);
    const std::string page = (dir_ / "big.html").string();
    const Outcome out = electsim_test::RunCombined("run " + electsim_test::ShippedScenario(args) +
                                                   " --repro-dir '' --trace-format html --trace " + page);
    EXPECT_NE(out.output.find("trace-hash"), std::string::npos) << out.output;
    EXPECT_LT(fs::file_size(page), 1000000u);
    const std::string html = electsim_test::ReadWholeFile(page);
    const bool storm = args.rfind("raft-split-votes", 0) == 0;
    EXPECT_EQ(html.find("\"cut_at\":-1") == std::string::npos, storm) << "cut only when roles pass the budget";
    EXPECT_EQ(html.find("\"undrawn_messages\":0,") == std::string::npos, true) << "messages past the budget";
  }
}

}  // namespace
