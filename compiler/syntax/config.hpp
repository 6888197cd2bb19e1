#pragma once

// Configuration of the X3 grammar (X3's "config.hpp"): the iterator, the skipper and
// the context every rule is instantiated with. BOOST_SPIRIT_INSTANTIATE in each
// grammar .cpp and the x3::with<> in parser.cpp must agree with this file.

#include <boost/spirit/home/x3.hpp>
#include <functional>

#include "compiler/syntax/common.hpp"
#include "compiler/syntax/error_handler.hpp"

namespace pipec::syntax::grammar {

namespace x3 = boost::spirit::x3;

using iterator_type = const char*;
using phrase_context_type = x3::phrase_parse_context<skipper_type>::type;
using context_type =
    x3::context<position_tag, std::reference_wrapper<Positions>, phrase_context_type>;

}  // namespace pipec::syntax::grammar
