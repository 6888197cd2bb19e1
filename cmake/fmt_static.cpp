// fmt's implementation, compiled once into the static library `fmt-static` (CMakeLists.txt).
// Debian ships fmt as a shared library only, and loading it brings the shared libstdc++ and
// libgcc with it, which pipec otherwise links in: that was 0.6 ms of every pipec start.
// format-inl.h is fmt's own implementation header (the one FMT_HEADER_ONLY includes); the two
// templates format.h declares `extern template` are instantiated here for char.

#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;
}  // namespace detail
FMT_END_NAMESPACE
