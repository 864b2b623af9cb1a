#include "pipeline_stages/stage.h"

namespace skald::stages {
namespace {

// The rest of a chain after one stage.
class ChainRest final : public Downstream {
 public:
  ChainRest(StageChain* chain, size_t from, Downstream* tail)
      : chain_(chain), from_(from), tail_(tail) {}
  void Emit(Entry&& entry) override { chain_->Run(entry, *tail_, from_); }

 private:
  StageChain* chain_;
  size_t from_;
  Downstream* tail_;
};

}  // namespace

void StageChain::Run(Entry& entry, Downstream& tail, size_t from) {
  for (size_t i = from; i < stages_.size(); ++i) {
    ChainRest rest(this, i + 1, &tail);
    if (stages_[i]->Process(entry, rest) != Verdict::kPass) return;
  }
  tail.Emit(std::move(entry));
}

bool StageChain::Holds() const {
  for (const auto& stage : stages_) {
    if (stage->Holds()) return true;
  }
  return false;
}

std::optional<uint64_t> StageChain::OldestHeldOrigin() const {
  std::optional<uint64_t> oldest;
  for (const auto& stage : stages_) {
    if (auto o = stage->OldestHeldOrigin(); o && (!oldest || *o < *oldest)) oldest = o;
  }
  return oldest;
}

size_t StageChain::HeldBytes() const {
  size_t bytes = 0;
  for (const auto& stage : stages_) bytes += stage->HeldBytes();
  return bytes;
}

void StageChain::Flush(int64_t now_ns, bool final, Downstream& tail) {
  for (size_t i = 0; i < stages_.size(); ++i) {
    ChainRest rest(this, i + 1, &tail);
    stages_[i]->Flush(now_ns, final, rest);
  }
}

}  // namespace skald::stages
