// The electsim binary: the built-in algorithms only.
#include <cstddef>
#include <cstdlib>
#include <new>

#include "electsim/electsim.h"

#ifdef ELECTSIM_MIMALLOC
// The binary allocates with mimalloc (tools/CMakeLists.txt), which replaces
// malloc and also the C++ allocation operators. Its throwing operator new
// aborts when memory runs out, where the standard one throws std::bad_alloc,
// which the CLI reports as "out of memory" with exit status 3 and no file
// half-written. These four take precedence over the library's, allocate
// through its malloc and keep the standard behaviour; mimalloc's delete and
// nothrow forms already behave as the standard says.
namespace {
void* AllocateOrThrow(std::size_t size, std::size_t alignment) {
  if (size == 0) size = 1;
  for (;;) {
    void* memory = alignment == 0 ? std::malloc(size)
                                  : std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
    if (memory != nullptr) return memory;
    const std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}
}  // namespace

void* operator new(std::size_t size) { return AllocateOrThrow(size, 0); }
void* operator new[](std::size_t size) { return AllocateOrThrow(size, 0); }
void* operator new(std::size_t size, std::align_val_t alignment) {
  return AllocateOrThrow(size, static_cast<std::size_t>(alignment));
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  return AllocateOrThrow(size, static_cast<std::size_t>(alignment));
}
#endif  // ELECTSIM_MIMALLOC

int main(int argc, char** argv) { return electsim::Main(argc, argv); }
