// Which driver calls end an open profiling session (kernel replay) or batch (batch replay): the
// callbacks are enabled for those alone.
#pragma once

#include <string_view>

namespace gpulab::inject {

bool ends_a_session(std::string_view name);
bool ends_a_batch(std::string_view name);

}  // namespace gpulab::inject
