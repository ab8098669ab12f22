// Kernel names as the toolchain writes them (mangled), as C++ reads them (demangled), and short
// enough for a table column. ncu and nsys print the demangled form and search by the base name;
// gpulab keeps both full forms in reports so that a finding can be found in those tools and in
// the source.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gpulab::report {

// The demangled signature ("void transpose_shared<RowMajorTile>(const float*, ...)"); a name
// that is not an Itanium C++ mangled name (an extern "C" kernel) is returned as it is.
std::string demangle(const std::string& mangled);

// The function with its template arguments, without return type, parameters, and the
// namespaces every lab kernel lives in:
// "void gpulab::labs::(anonymous namespace)::reduce<(anonymous namespace)::Plain>(float const*)"
// -> "reduce<Plain>". Takes a demangled name.
std::string display_name(const std::string& demangled);

// How text output names a kernel's function: its display name, cut to `width` code points with
// an ellipsis in the middle (library kernels' template arguments run to hundreds of characters,
// and two kernels that share a long head differ at the end); reports keep the whole name. Takes a
// demangled name.
std::string shown_function(const std::string& demangled, std::size_t width = 56);

// A name cut to `width` characters, its head and its tail joined by an ellipsis; as it is when it
// fits or `width` is 0.
std::string shortened(const std::string& name, std::size_t width);

// Each of `names` cut to `width` as `shortened` cuts it, except where different names would read
// the same (cuBLAS's sm80_xmma_gemm_... kernels share their head and tail and differ in the
// middle, in the tile size): each of those keeps its head and shows, after it, the part from where
// it first differs from the others. Returned in the order of `names`.
std::vector<std::string> shortened_apart(const std::vector<std::string>& names, std::size_t width);

// The bare function name, as ncu's --kernel-name-base function prints it: "reduce". Takes a
// demangled name.
std::string base_name(const std::string& demangled);

// Whether `selection` (what a user typed after --kernel) names a kernel with this label and this
// demangled function: the label, the display name or the base name.
bool names_kernel(const std::string& selection, const std::string& label,
                  const std::string& demangled);

// A kernel's heading in text output: "label · function" where they differ, else the label.
std::string kernel_heading(const std::string& label, const std::string& demangled);

}  // namespace gpulab::report
