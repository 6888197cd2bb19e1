// Instantiation of the expression rules (X3's "expression.cpp").
#include "compiler/syntax/config.hpp"
#include "compiler/syntax/expression_def.hpp"

namespace pipec::syntax::grammar {
BOOST_SPIRIT_INSTANTIATE(expression_type, iterator_type, context_type)
}  // namespace pipec::syntax::grammar
