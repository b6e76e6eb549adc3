// Whether the tests are built with AddressSanitizer: GCC says so with
// __SANITIZE_ADDRESS__, clang (the sanitizer build's compiler) with
// __has_feature.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define ELECTSIM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ELECTSIM_TEST_ASAN 1
#endif
#endif
