// KFP graph components (`implementation.graph`): each task's componentRef resolved as kfp
// 1.8.22's ComponentStore resolves it (_component_store.py), offline: an inline `spec`, else
// the file of the component cache its `digest` names, its SHA-256 checked. Then each task's
// arguments are checked against the component it calls, and the graph's input and output
// types settled. The graph becomes a pipeline (declaration()); each task a step of it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "compiler/base/sha256.hpp"
#include "compiler/sema/component_detail.hpp"

namespace pipec::sema::component {

using ir::Type;
using ir::TypeKind;

namespace detail {

std::optional<ir::Literal> constant_literal(const std::string& text, const Type& t) {
  switch (t.kind) {
    case TypeKind::Int:
      try {
        std::size_t used = 0;
        long long v = std::stoll(text, &used);
        if (used == text.size()) return ir::Literal(v);
      } catch (const std::exception&) {
      }
      return std::nullopt;
    case TypeKind::Float:
      try {
        std::size_t used = 0;
        double v = std::stod(text, &used);
        if (used == text.size() && std::isfinite(v)) return ir::Literal(v);
      } catch (const std::exception&) {
      }
      return std::nullopt;
    case TypeKind::Bool:
      if (is_true_word(text)) return ir::Literal(true);
      if (is_false_word(text)) return ir::Literal(false);
      return std::nullopt;
    case TypeKind::File:
      return std::nullopt;
    default:
      return ir::Literal(text);
  }
}

}  // namespace detail

namespace {

bool is_digest(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char ch) {
           return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
         });
}

const Input* find_input(const Component& c, const std::string& kfp) {
  auto it = std::find_if(c.inputs.begin(), c.inputs.end(), [&](const Input& i) { return i.kfp_name == kfp; });
  return it == c.inputs.end() ? nullptr : &*it;
}

const Output* find_output(const Component& c, const std::string& kfp) {
  auto it = std::find_if(c.outputs.begin(), c.outputs.end(), [&](const Output& o) { return o.kfp_name == kfp; });
  return it == c.outputs.end() ? nullptr : &*it;
}

class RefResolver {
 public:
  RefResolver(SourceManager& sources, Diagnostics& diags, const Host& host, const Fetch& fetch,
              std::vector<std::string>* saved)
      : sources_(sources), diags_(diags), host_(host), fetch_(fetch), saved_(saved) {}

  bool resolve(Component& c, int depth) {
    if (!c.graph) return true;
    if (depth > kMaxGraphDepth) {
      diags_.error(c.range, fmt::format("graph components nest deeper than {} levels", kMaxGraphDepth));
      return false;
    }
    bool ok = true;
    for (auto& t : c.tasks) ok = resolve_task(t, depth) && ok;
    return ok && check(c);
  }

 private:
  bool fail(SourceRange at, std::string message) {
    diags_.error(at, std::move(message));
    return false;
  }

  bool resolve_task(Task& t, int depth) {
    if (t.component) {  // an inline spec
      if (!resolve(*t.component, depth + 1)) return false;
      t.key = "inline:" + sha256_hex(declaration(*t.component));
      return true;
    }
    std::string url = t.url.empty() ? "" : fmt::format(", url {}", t.url);
    if (t.digest.empty())
      return fail(t.ref_range, fmt::format("the componentRef of task '{}' has no 'spec' or 'digest'{}: pipec "
                                           "finds a component by its digest in the component cache",
                                           t.kfp_name, url));
    if (!is_digest(t.digest))
      return fail(t.ref_range, fmt::format("the digest of task '{}' must be a SHA-256: 64 lower-case hex "
                                           "digits, got '{}'",
                                           t.kfp_name, t.digest));
    t.key = "sha256:" + t.digest;
    if (std::find(chain_.begin(), chain_.end(), t.digest) != chain_.end())
      return fail(t.ref_range, fmt::format("task '{}' calls a graph component that calls it (componentRef "
                                           "{}): graph components cannot call themselves",
                                           t.kfp_name, t.digest));
    // Each component is resolved once: a digest met again is the component resolved (as
    // deep as it nests below), or refused already (then said once, not once per path to
    // it: two tasks per level, 16 levels, were 2^16 walks of the refusal; issue 42).
    if (refused_.count(t.digest)) return false;
    if (auto it = by_digest_.find(t.digest); it != by_digest_.end()) {
      if (depth + it->second.levels > kMaxGraphDepth)
        return fail(t.ref_range, fmt::format("task '{}' calls a graph component that nests {} levels deep: graph "
                                             "components nest deeper than {} levels",
                                             t.kfp_name, it->second.levels, kMaxGraphDepth));
      t.component = it->second.component;
      return true;
    }
    if (by_digest_.size() >= kMaxGraphComponents)
      return fail(t.ref_range, fmt::format("a graph component references at most {} components",
                                           kMaxGraphComponents));
    const std::string& dir = host_.component_cache;
    std::string path = (std::filesystem::path(dir) / t.digest).generic_string();
    std::error_code ec;
    if (!dir.empty() && fetch_ && !t.url.empty() && !std::filesystem::exists(path, ec) && !download(t, path))
      return false;
    if (dir.empty() || !std::filesystem::is_regular_file(path, ec))
      return fail(t.ref_range,
                  fmt::format("the component of task '{}' (digest {}{}) is not in the component cache "
                              "{}: run `pipec component fetch` on the component that uses it (it "
                              "downloads the url), or save the file there named by its digest (its "
                              "SHA-256), or set PIPEC_COMPONENT_CACHE to a directory that has it",
                              t.kfp_name, t.digest, url, dir.empty() ? host_.component_cache_missing : "'" + dir + "'"));
    std::string error;
    FileId file = load_file(sources_, path, error);
    if (file == kNoFile)
      return fail(t.ref_range, fmt::format("cannot read '{}' (the component of task '{}'): {}", path, t.kfp_name, error));
    if (std::string actual = sha256_hex(sources_.text(file)); actual != t.digest)
      return fail(t.ref_range, fmt::format("'{}' (the component of task '{}') has SHA-256 {}, not its "
                                           "digest {}: replace it with the component the digest names",
                                           path, t.kfp_name, actual, t.digest));
    auto c = std::make_shared<Component>();
    if (!read(sources_, file, diags_, *c)) {
      diags_.note(t.ref_range, fmt::format("the component of task '{}'", t.kfp_name));
      refused_.insert(t.digest);
      return false;
    }
    chain_.push_back(t.digest);
    bool ok = resolve(*c, depth + 1);
    chain_.pop_back();
    if (!ok) {
      diags_.note(t.ref_range, fmt::format("the component of task '{}'", t.kfp_name));
      refused_.insert(t.digest);
      return false;
    }
    by_digest_.emplace(t.digest, Resolved{c, levels(*c)});
    t.component = std::move(c);
    return true;
  }

  // `pipec component fetch`: the file at the task's url, saved in the cache when its
  // SHA-256 is the digest.
  bool download(const Task& t, const std::string& path) {
    std::string body, error;
    if (!fetch_(t.url, body, error))
      return fail(t.ref_range, fmt::format("cannot fetch the component of task '{}' from {}: {}", t.kfp_name, t.url, error));
    if (body.size() > kMaxFileBytes)
      return fail(t.ref_range, fmt::format("the component of task '{}' at {} is larger than {} bytes", t.kfp_name,
                                           t.url, kMaxFileBytes));
    if (std::string actual = sha256_hex(body); actual != t.digest)
      return fail(t.ref_range, fmt::format("the file at {} (task '{}') has SHA-256 {}, not the componentRef's digest "
                                           "{}: it is not the component the digest names",
                                           t.url, t.kfp_name, actual, t.digest));
    if (!host_.save_component) error = "there is no component cache to save it in";
    if (!host_.save_component || !host_.save_component(t.digest, body, error))
      return fail(t.ref_range, fmt::format("cannot save the component of task '{}': {}", t.kfp_name, error));
    if (saved_) saved_->push_back(path);
    return true;
  }

  // Each task's arguments against the component it calls (kfp passes a constant as the
  // input's text); then the graph's input types (a `file` where a task takes one) and
  // output types (those of the outputs they are).
  bool check(Component& c) {
    tasks_.clear();
    for (const auto& t : c.tasks) tasks_.emplace(t.kfp_name, &t);
    bool ok = true;
    std::map<std::string, bool> takes_file;
    for (const auto& t : c.tasks) {
      const Component& callee = *t.component;
      for (const auto& [kfp, a] : t.args) {
        const Input* to = find_input(callee, kfp);
        if (!to) {
          ok = fail(a.range, fmt::format("task '{}' gives '{}', which is not an input of '{}'", t.kfp_name,
                                         kfp, callee.kfp_name));
          continue;
        }
        if (a.kind == GraphArg::Kind::Constant && to->type.kind != TypeKind::File &&
            !detail::constant_literal(a.text, to->type))
          ok = fail(a.range, fmt::format("task '{}' gives input '{}' ({}) the constant '{}', which is not a {}",
                                         t.kfp_name, kfp, to->type.str(), a.text,
                                         to->type.kind == TypeKind::File ? "step's file output" : to->type.str()));
        if (a.kind == GraphArg::Kind::GraphInput && to->type.kind == TypeKind::File) takes_file[a.text] = true;
        if (a.kind == GraphArg::Kind::TaskOutput) ok = check_output(a) && ok;
      }
      for (const auto& in : callee.inputs) {
        bool given = std::any_of(t.args.begin(), t.args.end(), [&](const auto& a) { return a.first == in.kfp_name; });
        if (!given && !in.default_value && !(in.optional && !callee.graph) && in.name != callee.image_param)
          ok = fail(t.range, fmt::format("task '{}' does not give input '{}' of '{}', which has no default",
                                         t.kfp_name, in.kfp_name, callee.kfp_name));
        if (!given && in.name == callee.image_param && !callee.image_param.empty())
          ok = fail(t.range, fmt::format("task '{}' calls '{}', whose image is empty: pipec cannot give it one "
                                         "inside a graph component",
                                         t.kfp_name, callee.kfp_name));
      }
    }
    for (auto& in : c.inputs) {
      if (!takes_file.count(in.kfp_name)) continue;
      in.type = Type::scalar(TypeKind::File);
      in.default_value.reset();
    }
    for (auto& [kfp_name, a] : c.output_values) {
      if (!check_output(a)) {
        ok = false;
        continue;
      }
      const std::string& kfp = kfp_name;  // a lambda may not capture a structured binding (clang)
      auto out = std::find_if(c.outputs.begin(), c.outputs.end(), [&](const Output& o) { return o.kfp_name == kfp; });
      out->type = find_output(*tasks_.at(a.task)->component, a.text)->type;
    }
    return ok;
  }

  bool check_output(const GraphArg& a) {
    const Component& from = *tasks_.at(a.task)->component;
    if (find_output(from, a.text)) return true;
    return fail(a.range, fmt::format("taskOutput names '{}', which is not an output of task '{}' ('{}')", a.text,
                                     a.task, from.kfp_name));
  }

  SourceManager& sources_;
  Diagnostics& diags_;
  const Host& host_;
  const Fetch& fetch_;
  std::vector<std::string>* saved_;
  // How many graph components nest in `c`, itself included (0: a container component); a
  // component by digest is looked up, not walked again.
  int levels(const Component& c) const {
    if (!c.graph) return 0;
    int below = 0;
    for (const auto& t : c.tasks) {
      if (auto it = by_digest_.find(t.digest); !t.digest.empty() && it != by_digest_.end())
        below = std::max(below, it->second.levels);
      else if (t.component)
        below = std::max(below, levels(*t.component));
    }
    return below + 1;
  }

  struct Resolved {
    std::shared_ptr<Component> component;
    int levels = 0;  // levels(*component)
  };
  std::map<std::string, Resolved> by_digest_;
  std::set<std::string> refused_;  // digests whose component was refused (and said why)
  std::vector<std::string> chain_;  // the digests being resolved, outermost first
  std::map<std::string, const Task*> tasks_;  // of the graph being checked, by KFP name
};

}  // namespace

bool resolve_refs(SourceManager& sources, Component& c, Diagnostics& diags, const Host& host, const Fetch& fetch,
                  std::vector<std::string>* saved) {
  RefResolver r(sources, diags, host, fetch, saved);
  return r.resolve(c, 0);
}

}  // namespace pipec::sema::component
