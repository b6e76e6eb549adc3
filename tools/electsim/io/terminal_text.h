// Text from input files on its way to a terminal. A scenario, a repro or a
// file name can carry bytes a terminal obeys rather than shows: ESC [2J
// clears the screen, ESC ] 52 writes the clipboard, U+202E reverses what
// follows. Every message that quotes file text passes it through here first.
#pragma once

#include <string>
#include <string_view>

namespace electsim {

// Returns `text` with everything a terminal could act on made visible:
//   - C0 controls and DEL as JSON writes them: \n, \t, \r, \u001b, \u007f;
//   - C1 controls (U+0080..U+009F) and the invisible direction and line
//     controls (U+061C, U+200E, U+200F, U+2028, U+2029, U+202A..U+202E,
//     U+2066..U+2069) as \uXXXX;
//   - bytes that are not well-formed UTF-8 as \xNN.
// Printable ASCII (backslash included) and other well-formed UTF-8 pass
// unchanged, so escaping twice gives the same text as escaping once: callers
// at different layers may each escape without garbling a message.
std::string EscapeForTerminal(std::string_view text);

}  // namespace electsim
