#pragma once

// Position annotation for the X3 grammar: rule ID classes that derive annotate_range
// get their node's SourceRange filled in on success (x3::annotate_on_success, but
// storing byte offsets into a SourceManager file instead of iterators).

#include <boost/spirit/home/x3/auxiliary/guard.hpp>
#include <boost/spirit/home/x3/support/context.hpp>
#include <cstdint>
#include <string>
#include <type_traits>

#include "compiler/base/source_manager.hpp"
#include "compiler/syntax/ast.hpp"

namespace pipec::syntax::grammar {

namespace x3 = boost::spirit::x3;

/// Context tag under which the parser passes its Positions.
struct position_tag;

/// Error recovery (parser.cpp): reports an expectation failure and returns where to
/// resume, always after `start` so that the parse makes progress.
class Recovery {
 public:
  enum class Level { Statement, Declaration };
  virtual const char* recover(Level level, const char* start, const char* where,
                              const std::string& which) = 0;

 protected:
  ~Recovery() = default;
};

/// Turns parser iterators into SourceRanges of one file.
struct Positions {
  FileId file = kNoFile;
  const char* base = nullptr;
  Recovery* recovery = nullptr;  // null: expectation failures propagate
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

/// For the rules that wrap one statement or one top-level declaration: an expectation
/// failure inside is reported and the parse resumes at the next statement (or
/// declaration) boundary, so one pass reports every syntax error.
template <Recovery::Level level>
struct recover_at {
  template <typename Iterator, typename Exception, typename Context>
  x3::error_handler_result on_error(Iterator& first, Iterator const&, Exception const& x,
                                    Context const& ctx) {
    Recovery* recovery = x3::get<position_tag>(ctx).get().recovery;
    if (recovery == nullptr) return x3::error_handler_result::rethrow;
    first = recovery->recover(level, first, x.where(), x.which());
    return x3::error_handler_result::accept;
  }
};

}  // namespace pipec::syntax::grammar
