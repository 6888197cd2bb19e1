// Instantiation of the top rule (X3's "module.cpp").
#include "compiler/syntax/config.hpp"
#include "compiler/syntax/module_def.hpp"

namespace pipec::syntax::grammar {
BOOST_SPIRIT_INSTANTIATE(module_type, iterator_type, context_type)
}  // namespace pipec::syntax::grammar
