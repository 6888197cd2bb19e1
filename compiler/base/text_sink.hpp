#pragma once
// Where a large text goes piece by piece, in order, so that it is never held whole: a
// writer hands each piece to the sink and forgets it (`pipec build -o FILE.yaml` streams the
// Argo document into the output file this way).

#include <functional>
#include <string_view>

namespace pipec {

using TextSink = std::function<void(std::string_view)>;

}  // namespace pipec
