#pragma once

// The lowering's decisions about the shape of the graph, made once by lower::lower and read
// by every back end (emit/argo, emit/kfpv2, local, graph): which DAG each step and loop is
// a node of (the scopes of loops), which step outputs each node reads and how they reach
// it (a task of the same DAG, or through the loops that hold it: fan-in), and what each
// loop passes out of its body; what each container op's container receives and its pod is
// given (ir/invocation.hpp, ir/pod.hpp). It holds names and indices only, so a copied Pipeline keeps
// a valid plan.
//
// A pipeline called as a step (ir::Pipeline::callees) has a plan of its own: its template
// is shared by every call, so its routes never cross into the caller's; `outputs` says how
// each of its outputs reaches the top of its DAG (a task's output, or fan-in through loops).

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/ir/invocation.hpp"
#include "compiler/ir/launcher_call.hpp"
#include "compiler/ir/pod.hpp"
#include "compiler/ir/type.hpp"

namespace pipec::ir {

/// A hash table by name that is looked up with a `std::string_view` (no copy).
struct NameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
template <typename T>
using NameMap = std::unordered_map<std::string, T, NameHash, std::equal_to<>>;

struct Plan {
  using DagId = std::uint32_t;
  static constexpr DagId kNoDag = 0xffffffffu;
  static constexpr DagId kMain = 0;     // the pipeline's DAG
  static constexpr DagId kFinally = 1;  // its `finally` steps (the exit handler)

  /// One DAG: the pipeline's, its exit handler's, or a loop's body.
  struct Dag {
    std::string owner;            // the loop whose body this is; "" for kMain and kFinally
    std::string var;              // that loop's variable
    DagId parent = kNoDag;        // the DAG `owner` is a node of
    std::vector<std::string> nodes;  // names of its steps and loops, in source order
    /// A step of it runs after another's failure or whatever its outcome (ir::Step::upon):
    /// its tasks say on which outcome of each dependency they run (Argo's `depends`).
    bool outcomes = false;
  };
  std::vector<Dag> dags;  // kMain, kFinally, then loop bodies in source order

  /// Where a step or loop stands.
  struct Place {
    DagId dag = kNoDag;    // the DAG it is a node of
    DagId body = kNoDag;   // a loop's body
    bool loop = false;
    bool conditional = false;  // it has a `when`
  };
  NameMap<Place> places;  // every step and loop, by name (looked up, never walked)

  /// How a value of step `step` reaches a node of one DAG.
  struct Route {
    enum class Kind {
      Sibling,  // `step` is a node of that DAG: its task's output
      FanIn,    // `step` is inside loops of that DAG: `through[0]` (a node of the DAG)
                // gives the list of its values, one per iteration (lists of lists when
                // `through` holds more loops, outermost first)
      Outside,  // from outside the DAG: an input of its template
    };
    Kind kind = Kind::Outside;
    std::vector<std::string> through;  // FanIn: the loops crossed, outermost first
  };
  [[nodiscard]] Route route(DagId dag, std::string_view step) const;

  /// One step output a node reads (in its arguments, condition or items; a loop also
  /// what its body reads from outside the body), with its route to the node's DAG.
  struct Read {
    std::string step, field;
    Route route;
  };
  NameMap<std::vector<Read>> reads;  // by node name, first use first (looked up, never walked)

  /// One step output a loop gives as an output of its body (fan-in): the list of its
  /// values, one per iteration, with the type it has there (a list per loop crossed).
  struct Export {
    std::string step, field;
    Type type;
  };
  std::map<std::string, std::vector<Export>, std::less<>> exports;  // by loop name, by (step, field)

  /// The step outputs the pipeline gives as its own (ir::Pipeline::outputs, a callee's),
  /// in that order, each routed to kMain.
  std::vector<Read> outputs;

  /// What each container op's container receives, by op name.
  std::map<std::string, Invocation, std::less<>> containers;
  [[nodiscard]] const Invocation& container(std::string_view op) const;
  /// What each container op's pod is given beside it (resources, placement, security,
  /// metadata, retries, caching), by op name.
  std::map<std::string, Pod, std::less<>> pods;
  [[nodiscard]] const Pod& pod(std::string_view op) const;

  /// The `pipec-launcher` call of each training step (mpi_job, tf_job, pytorch_job,
  /// train_job), by step name: built once by the lowering with the build's options
  /// (lower::Options). A step whose call could not be built has none.
  std::map<std::string, LauncherCall, std::less<>> launchers;
  [[nodiscard]] const LauncherCall* launcher(std::string_view step) const;

  /// The loop whose variable `var` is, seen from a node of `dag`: the innermost loop
  /// around the DAG that binds it. "" when none.
  [[nodiscard]] std::string_view loop_of_var(DagId dag, std::string_view var) const;

  [[nodiscard]] const Place* place(std::string_view name) const {
    auto it = places.find(name);
    return it == places.end() ? nullptr : &it->second;
  }
};

}  // namespace pipec::ir
