// The source revision the binary was built from, as `git describe --always
// --dirty --tags` named it at build time (tools/revision.cmake), or "unknown,
// built without git history".
#pragma once

namespace electsim {

const char* BuildRevision();

}  // namespace electsim
