#pragma once
// Kubernetes quantities and the GPU resource a step asks for.

#include <optional>
#include <string>
#include <string_view>

namespace pipec::rules {

/// A Kubernetes quantity (resource.Quantity): a non-negative decimal with an optional
/// binary (Ki..Ei), decimal (n u m k M G T P E) or exponent (e3, E-2) suffix: 2, 500m, 10Gi.
[[nodiscard]] bool is_quantity(std::string_view text);

/// The value of a quantity as a number (500m -> 0.5, 2Gi -> 2147483648, 1e3 -> 1000);
/// nullopt when `text` is not a quantity or its exponent is beyond +-30.
[[nodiscard]] std::optional<double> quantity_value(std::string_view text);

/// The resource a GPU count is asked for under: "nvidia" and "amd" (as KFP's
/// set_gpu_limit) mean <vendor>.com/gpu, a name with '/' is the resource itself.
/// Check the result with is_resource_name().
[[nodiscard]] std::string gpu_resource_name(std::string_view vendor);

}  // namespace pipec::rules
