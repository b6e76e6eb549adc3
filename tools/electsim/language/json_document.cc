#include "tools/electsim/language/json_document.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "fmt/format.h"
#include "tools/electsim/io/terminal_text.h"

namespace electsim {

using nlohmann::json;

absl::Status InputError(std::string_view message) { return absl::InvalidArgumentError(EscapeForTerminal(message)); }

absl::Status JsonInputError(std::string_view source, std::string_view json_path, std::string_view expected) {
  return InputError(fmt::format("{}: at {}: expected {}", source, json_path.empty() ? "/" : json_path, expected));
}

std::string JsonPointerToken(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::optional<uint64_t> AsNonNegativeInteger(const json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer() && value.get<int64_t>() >= 0) return static_cast<uint64_t>(value.get<int64_t>());
  return std::nullopt;
}

std::string DescribeJsonValue(const json& value) {
  if (value.is_null()) return "null";
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer()) return fmt::format("the integer {}", value.dump());
  if (value.is_number_float()) return fmt::format("the number {}", value.dump());
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    constexpr size_t kShown = 40;
    if (text.size() <= kShown) return fmt::format("the string \"{}\"", text);
    // Cut at a character boundary, not inside a UTF-8 sequence.
    size_t cut = kShown;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
    return fmt::format("the string \"{}...\"", text.substr(0, cut));
  }
  if (value.is_array()) return "an array";
  return "an object";
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status))
    return InputError(fmt::format("{}: is a directory, expected a file", path));
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    // A device or a pipe may never end (/dev/zero).
    return InputError(fmt::format("{}: is a device, pipe or socket, expected a file", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(EscapeForTerminal(fmt::format("{}: cannot open: {}", path, std::strerror(errno))));
  }
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxInputFileBytes) {
    return InputError(fmt::format("{}: is {} bytes, expected at most {} bytes", path, size, kMaxInputFileBytes));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

namespace {

// Builds the document from nlohmann's SAX events, refusing what
// nlohmann::json::parse would let through or take too deep. Each event costs
// O(1) apart from the key lookup in its own object (O(log keys)); the JSON
// path is put together only when there is something to report.
class StrictDocumentBuilder {
 public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  enum class Failure { kNone, kDuplicateKey, kTooDeep, kSyntax, kNumberOutOfRange };

  bool null() { return Add(json(nullptr)); }
  bool boolean(bool value) { return Add(json(value)); }
  bool number_integer(number_integer_t value) { return Add(json(value)); }
  bool number_unsigned(number_unsigned_t value) { return Add(json(value)); }
  bool number_float(number_float_t value, const string_t&) { return Add(json(value)); }
  bool string(string_t& value) { return Add(json(std::move(value))); }
  bool binary(binary_t&) { return false; }  // JSON text has no binary values

  bool start_object(std::size_t) { return Open(json::value_t::object); }
  bool start_array(std::size_t) { return Open(json::value_t::array); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }

  bool key(string_t& key) {
    Frame& frame = open_.back();
    auto [slot, inserted] = frame.container->get_ref<json::object_t&>().emplace(std::move(key), nullptr);
    frame.slot = &slot->second;
    frame.key = &slot->first;
    if (!inserted) return Fail(Failure::kDuplicateKey, PathOfSlot());
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& error) {
    error_position_ = position;
    error_text_ = error.what();
    // 406: a number too large for a double ("1e400"), the only range error.
    if (error.id == 406) return Fail(Failure::kNumberOutOfRange, PathOfSlot());
    return Fail(Failure::kSyntax, "");
  }

  json TakeDocument() { return std::move(root_); }
  Failure failure() const { return failure_; }
  const std::string& failure_path() const { return failure_path_; }
  std::size_t error_position() const { return error_position_; }
  const std::string& error_text() const { return error_text_; }

 private:
  // An array or object being filled, and in an object the member whose value
  // comes next (set by its key).
  struct Frame {
    json* container;
    json* slot = nullptr;
    const std::string* key = nullptr;
  };

  bool Fail(Failure failure, std::string path) {
    failure_ = failure;
    failure_path_ = std::move(path);
    return false;
  }

  // Where the next value goes. Containers above the top one are not touched
  // until it closes, so the pointers held in `open_` stay valid.
  json* Place(json&& value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Frame& frame = open_.back();
    if (frame.container->is_array()) {
      auto& array = frame.container->get_ref<json::array_t&>();
      array.push_back(std::move(value));
      return &array.back();
    }
    *frame.slot = std::move(value);
    return frame.slot;
  }

  bool Add(json&& value) {
    Place(std::move(value));
    return true;
  }

  bool Open(json::value_t type) {
    if (open_.size() >= kMaxJsonDepth) return Fail(Failure::kTooDeep, PathOfSlot());
    open_.push_back(Frame{Place(json(type))});
    return true;
  }

  bool Close() {
    open_.pop_back();
    return true;
  }

  // The JSON path of the value the parser is about to deliver.
  std::string PathOfSlot() const {
    std::string path;
    for (const Frame& frame : open_) {
      path += '/';
      if (frame.container->is_array()) {
        // The element being read is the one after those already stored;
        // below the top frame it is the last one stored.
        const size_t size = frame.container->size();
        path += fmt::format("{}", &frame == &open_.back() ? size : size - 1);
      } else if (frame.key != nullptr) {
        path += JsonPointerToken(*frame.key);
      }
    }
    return path.empty() ? "/" : path;
  }

  json root_;
  std::vector<Frame> open_;
  Failure failure_ = Failure::kNone;
  std::string failure_path_;
  std::size_t error_position_ = 0;
  std::string error_text_;
};

// Editors count lines from 1 and columns in characters from 1.
std::string LineAndColumn(std::string_view text, size_t offset) {
  size_t line = 1, column = 1;
  offset = std::min(offset, text.size());
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) {  // not a UTF-8 continuation byte
      ++column;
    }
  }
  return fmt::format("{}:{}", line, column);
}

}  // namespace

absl::StatusOr<json> ParseJsonText(std::string_view text, const std::string& source) {
  // nlohmann's lexer takes a NUL byte for the end of the input, so text after
  // one would be ignored without a word.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    return InputError(
        fmt::format("{}:{}: invalid JSON: a NUL byte, expected text without any", source, LineAndColumn(text, nul)));
  }
  StrictDocumentBuilder builder;
  json::sax_parse(text.begin(), text.end(), &builder, json::input_format_t::json, /*strict=*/true);
  switch (builder.failure()) {
    case StrictDocumentBuilder::Failure::kNone: return builder.TakeDocument();
    case StrictDocumentBuilder::Failure::kDuplicateKey:
      return JsonInputError(source, builder.failure_path(), "each key once in an object, this key appears again");
    case StrictDocumentBuilder::Failure::kTooDeep:
      return JsonInputError(source, builder.failure_path(),
                            fmt::format("at most {} levels of nested arrays and objects", kMaxJsonDepth));
    case StrictDocumentBuilder::Failure::kNumberOutOfRange:
      return JsonInputError(source, builder.failure_path(),
                            "a number within the range of a 64-bit float, got one beyond it");
    case StrictDocumentBuilder::Failure::kSyntax: break;
  }
  // The error's position is one past the byte that stopped the parser.
  const size_t at = builder.error_position() > 0 ? builder.error_position() - 1 : 0;
  std::string what = builder.error_text();
  // "unexpected end of input" holds "expected end of input" too: test it first.
  if (what.find("unexpected end of input") != std::string::npos) {
    what = "the text ends before the JSON document does (empty, or cut short), expected a whole document";
  } else if (what.find("expected end of input") != std::string::npos) {
    what =
        "more text after the top-level value, expected only whitespace to the end of the file (one JSON document "
        "per file)";
  } else if (auto pos = what.find("syntax error"); pos != std::string::npos) {
    what = what.substr(pos);
  }
  return InputError(fmt::format("{}:{}: invalid JSON: {}", source, LineAndColumn(text, at), what));
}

}  // namespace electsim
