// Stage: one step of a pipeline, and StageChain: an ordered list of stages run as plain calls.
//
// A stage gets an entry and either passes it on (the common 1:1 case, no extra call), drops it,
// or takes it (to hold it, like multiline and limit, or to emit it through `next` itself, like
// match). Stages are built from YAML by their constructor, which validates everything; Process
// never fails. One chain runs on one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipeline_stages/entry.h"

namespace skald::stages {

// Where entries go after a stage: the rest of the chain.
class Downstream {
 public:
  virtual void Emit(Entry&& entry) = 0;

 protected:
  ~Downstream() = default;
};

enum class Verdict {
  kPass,   // continue with the next stage
  kDrop,   // the entry is gone (the stage has reported the reason)
  kTaken,  // the stage moved the entry out (held or emitted through `next`)
};

class Stage {
 public:
  virtual ~Stage() = default;
  virtual Verdict Process(Entry& entry, Downstream& next) = 0;
  // Emits held entries whose time has come; `final` (end of stream) emits all of them.
  virtual void Flush(int64_t /*now_ns*/, bool /*final*/, Downstream& /*next*/) {}
  // True while the stage holds entries it has taken (a multiline block, rate-limited or
  // partial entries) that a later Process or Flush will emit.
  virtual bool Holds() const { return false; }
  // Line bytes of the entries it holds (the host counts them against its memory window).
  virtual size_t HeldBytes() const { return 0; }
  // The smallest origin among the entries it holds; nullopt when it holds none.
  virtual std::optional<uint64_t> OldestHeldOrigin() const { return std::nullopt; }
};

class StageChain {
 public:
  void Add(std::unique_ptr<Stage> stage) { stages_.push_back(std::move(stage)); }
  bool empty() const { return stages_.empty(); }
  size_t size() const { return stages_.size(); }

  // Runs `entry` through stages [from, end); what leaves the last stage goes to `tail`.
  void Run(Entry& entry, Downstream& tail, size_t from = 0);
  // Flushes every stage in order, so entries released early pass through later stages.
  void Flush(int64_t now_ns, bool final, Downstream& tail);
  // True while any stage holds entries.
  bool Holds() const;
  size_t HeldBytes() const;
  std::optional<uint64_t> OldestHeldOrigin() const;

 private:
  std::vector<std::unique_ptr<Stage>> stages_;
};

}  // namespace skald::stages
