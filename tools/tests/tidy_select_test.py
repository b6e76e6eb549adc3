"""tools/tidy-select picks the units a change can have touched (ctest lint.tidy_select)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

SELECT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tidy-select")

# inc/b.h includes inc/a.h; u1 includes inc/b.h; u2 includes inc/c.h by <...>;
# u3 includes other/b.h, which has the same name as inc/b.h; u4 includes
# nothing; u5 includes other/a.h, named as inc/a.h, of which the baseline
# lists no warning.
FILES = {
    "inc/a.h": "// a\n",
    "inc/b.h": '#include "inc/a.h"\n',
    "inc/c.h": "// c\n",
    "other/b.h": "// another b.h\n",
    "other/a.h": "// another a.h\n",
    "src/u1.cc": '#include "inc/b.h"\n#include <vector>\n',
    "src/u2.cc": "#include <inc/c.h>\n",
    "src/u3.cc": '#include "other/b.h"\n',
    "src/u4.cc": "int x;\n",
    "src/u5.cc": '#include "other/a.h"\n',
    ".clang-tidy": "Checks: ''\n",
}
UNITS = ["src/u1.cc", "src/u2.cc", "src/u3.cc", "src/u4.cc", "src/u5.cc"]
# The accepted warnings: one in a file named b.h.
WARNINGS = "b.h: warning: use emplace_back instead of push_back [modernize-use-emplace]\n"


def git(root, *args):
    subprocess.run(["git", "-C", root, *args], check=True, capture_output=True)


class TreeTestCase(unittest.TestCase):
    """A git work tree holding TREE, committed, with build/units listing UNITS."""
    TREE = FILES

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = os.path.realpath(self.tmp.name)
        for path, text in self.TREE.items():
            self.write(path, text)
        git(self.root, "init", "-q")
        with open(os.path.join(self.root, ".git", "info", "exclude"), "a") as f:
            f.write("build/\nbuild-tidy/\n")
        self.commit_all("base")
        os.makedirs(os.path.join(self.root, "build"))
        self.units_file = os.path.join(self.root, "build", "units")
        with open(self.units_file, "w") as f:
            f.write("\n".join(UNITS) + "\n")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, path, text):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)

    def commit_all(self, message):
        """Commits the index and every file of the tree; self.commit is the new commit."""
        git(self.root, "add", ".")
        git(self.root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message)
        self.commit = subprocess.run(["git", "-C", self.root, "rev-parse", "HEAD"], check=True, capture_output=True,
                                     text=True).stdout.strip()


    def run_select(self, db, commit=None, version="14.0.6"):
        """tools/tidy-select over `db` with a baseline written at `commit`
        (self.commit by default, none for "") with clang-tidy `version`:
        the selected units, the file names and the first line."""
        baseline = os.path.join(self.root, "build", "baseline")
        with open(baseline, "w") as f:
            f.write("# accepted warnings\n")
            if commit != "":
                f.write(f"# all units checked at commit {commit or self.commit} with clang-tidy {version}\n")
            f.write(WARNINGS)
        out = subprocess.run([sys.executable, SELECT, db, self.root, self.units_file, baseline, "14.0.6"],
                             check=True, capture_output=True, text=True).stdout
        units = sorted(line[5:] for line in out.splitlines() if line.startswith("unit "))
        names = sorted(line[5:] for line in out.splitlines() if line.startswith("name "))
        return units, names, out.splitlines()[0]


class TidySelectTest(TreeTestCase):
    def setUp(self):
        super().setUp()
        self.db = os.path.join(self.root, "build", "compile_commands.json")
        with open(self.db, "w") as f:
            json.dump([{"directory": os.path.join(self.root, "build"), "file": os.path.join(self.root, u),
                        "command": f"clang++ -I{self.root} -c {os.path.join(self.root, u)}"} for u in UNITS], f)

    def select(self, commit=None, version="14.0.6"):
        return self.run_select(self.db, commit, version)

    def test_nothing_changed_selects_nothing(self):
        self.assertEqual(self.select()[:2], ([], []))

    def test_a_header_selects_its_includers_directly_or_not_and_same_names(self):
        self.write("inc/a.h", "// a, changed\n")
        units, names, _ = self.select()
        # u1 through inc/b.h; u3 because other/b.h has inc/b.h's name, which
        # the baseline lists; not u5, though other/a.h is named as inc/a.h.
        self.assertEqual(units, ["src/u1.cc", "src/u3.cc"])
        self.assertEqual(names, ["a.h", "b.h", "u1.cc", "u3.cc"])

    def test_an_angle_include_counts(self):
        self.write("inc/c.h", "// c, changed\n")
        self.assertEqual(self.select()[0], ["src/u2.cc"])

    def test_a_unit_selects_itself(self):
        self.write("src/u4.cc", "int y;\n")
        self.assertEqual(self.select()[:2], (["src/u4.cc"], ["u4.cc"]))

    def test_an_untracked_header_now_included_counts(self):
        self.write("inc/d.h", "// new\n")
        self.write("src/u4.cc", '#include "inc/d.h"\n')
        self.assertEqual(self.select()[0], ["src/u4.cc"])

    def test_the_lint_configuration_selects_every_unit(self):
        self.write(".clang-tidy", "Checks: 'bugprone-*'\n")
        units, _, why = self.select()
        self.assertEqual(units, UNITS)
        self.assertIn(".clang-tidy", why)

    def test_an_unknown_commit_another_version_or_none_select_every_unit(self):
        self.assertEqual(self.select("0" * 40)[0], UNITS)
        self.assertEqual(self.select(version="15.0.0")[0], UNITS)
        self.assertEqual(self.select("")[0], UNITS)


# A CMake build of the same units with the preset tools/check-tidy uses: the
# compile commands come from CMake, as in the real build.
CMAKE_LISTS = """cmake_minimum_required(VERSION 3.20)
project(t LANGUAGES CXX)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
add_library(t OBJECT src/u1.cc src/u2.cc src/u3.cc src/u4.cc src/u5.cc)
target_include_directories(t PRIVATE ${CMAKE_SOURCE_DIR})
"""
CMAKE_PRESETS = json.dumps({"version": 3, "configurePresets": [
    {"name": "tidy", "generator": "Ninja", "binaryDir": "${sourceDir}/build-tidy"}]})


class BuildConfigurationTest(TreeTestCase):
    """A change to the build's configuration selects the units whose
    compile commands it changed, found by configuring the baseline's tree."""
    TREE = {**FILES, "CMakeLists.txt": CMAKE_LISTS, "CMakePresets.json": CMAKE_PRESETS}

    def select(self):
        """Configures the work tree as tools/check-tidy does, then selects."""
        subprocess.run(["cmake", "--preset", "tidy"], cwd=self.root, check=True, capture_output=True)
        units, _, why = self.run_select(os.path.join(self.root, "build-tidy", "compile_commands.json"))
        return units, why

    def test_a_change_that_keeps_every_command_selects_nothing(self):
        self.write("CMakeLists.txt", CMAKE_LISTS + "# a comment\nset(UNUSED 1)\n")
        units, why = self.select()
        self.assertEqual(units, [])
        self.assertIn("0 units compile differently", why)

    def test_a_unit_given_another_define_is_selected_alone(self):
        self.write("CMakeLists.txt", CMAKE_LISTS + "set_source_files_properties(src/u4.cc PROPERTIES "
                                                   "COMPILE_DEFINITIONS ELECTSIM_TEST=1)\n")
        self.assertEqual(self.select()[0], ["src/u4.cc"])

    def test_flags_for_every_unit_select_every_unit(self):
        self.write("CMakeLists.txt", CMAKE_LISTS + "target_compile_options(t PRIVATE -Wshadow)\n")
        self.assertEqual(self.select()[0], UNITS)

    def test_a_baseline_tree_that_does_not_configure_selects_every_unit(self):
        # The baseline's tree has no preset "tidy" to configure with.
        git(self.root, "rm", "-q", "CMakePresets.json")
        self.commit_all("no presets")
        self.write("CMakePresets.json", CMAKE_PRESETS)
        units, why = self.select()
        self.assertEqual(units, UNITS)
        self.assertIn("did not configure", why)


if __name__ == "__main__":
    unittest.main()
