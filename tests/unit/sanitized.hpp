// Whether this build runs under AddressSanitizer: its shadow memory and checks multiply memory
// and time, so a test's bound on either holds only without it.
#pragma once

namespace gpulab::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace gpulab::test
