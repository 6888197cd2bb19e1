#pragma once

// Position annotation for the X3 grammar: rule ID classes that derive annotate_range
// get their node's SourceRange filled in on success (x3::annotate_on_success, but
// storing byte offsets into a SourceManager file instead of iterators).

#include <boost/spirit/home/x3/support/context.hpp>
#include <cstdint>
#include <type_traits>

#include "compiler/base/source_manager.hpp"
#include "compiler/syntax/ast.hpp"

namespace pipec::syntax::grammar {

namespace x3 = boost::spirit::x3;

/// Context tag under which the parser passes its Positions.
struct position_tag;

/// Turns parser iterators into SourceRanges of one file.
struct Positions {
  FileId file = kNoFile;
  const char* base = nullptr;
  SourceRange range_of(const char* first, const char* last) const {
    return SourceRange{file, static_cast<std::uint32_t>(first - base),
                       static_cast<std::uint32_t>(last - base)};
  }
};

struct annotate_range {
  template <typename Iterator, typename Context, typename Node>
  void on_success(Iterator const& first, Iterator const& last, Node& node, Context const& ctx) {
    if constexpr (std::is_base_of_v<ast::Located, Node>)
      node.range = x3::get<position_tag>(ctx).get().range_of(first, last);
  }
};

/// For the operator levels, whose rules yield an Expression: a node the level built (no
/// range yet) gets the rule's range; an operand passed through keeps its own.
struct annotate_level {
  template <typename Iterator, typename Context>
  void on_success(Iterator const& first, Iterator const& last, ast::Expression& e,
                  Context const& ctx) {
    boost::apply_visitor(
        [&](auto& n) {
          if constexpr (!std::is_base_of_v<ast::Located, std::decay_t<decltype(n)>>) {
            auto& node = n.get();
            if (!node.range.valid())
              node.range = x3::get<position_tag>(ctx).get().range_of(first, last);
          }
        },
        e);
  }
};

}  // namespace pipec::syntax::grammar
