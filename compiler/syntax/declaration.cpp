// Instantiation of the declaration rules (X3's "declaration.cpp").
#include "compiler/syntax/config.hpp"
#include "compiler/syntax/declaration_def.hpp"

namespace pipec::syntax::grammar {
BOOST_SPIRIT_INSTANTIATE(op_decl_type, iterator_type, context_type)
BOOST_SPIRIT_INSTANTIATE(pipeline_decl_type, iterator_type, context_type)
}  // namespace pipec::syntax::grammar
