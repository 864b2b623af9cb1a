// Journal::Writer: appends one FIFO session's bytes to a journal's active segment and rotates.
//
// Rotation happens only at frame boundaries: when the active segment reaches
// `max_segment_bytes`, the bytes after its last complete frame are copied to the start of the
// new segment before the old one is truncated to that boundary (a crash between those steps
// is repaired when the journal is opened again). The writer keeps its segment's size itself
// (one writer per segment) and publishes it to the journal after each move; it looks for
// frame boundaries only when a rotation is due, from the last boundary it knows, so the hot
// path is one splice(2) per call and no parsing.
//
// One thread uses a writer at a time. Journal::StartWriter and Journal::ResumeWriter make
// writers; a writer keeps its journal alive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "plugin/common/posix_file.h"
#include "plugin/journal/journal.h"

namespace skald {

class Journal::Writer {
 public:
  enum class Status {
    kMoved,       // `bytes` > 0 bytes moved
    kWouldBlock,  // nothing to read now (EAGAIN)
    kEof,         // the FIFO's writer closed it
    kFull,        // block_when_full and no room: nothing was taken from the FIFO
  };
  struct Result {
    Status status;
    std::size_t bytes = 0;
    // kMoved: the last splice (or read) took fewer bytes than it asked for, or the next one
    // found nothing: the FIFO was empty then (as a rule; a short write into a full disk also
    // ends a move early, and the next call meets its error). The FIFO's writer (dockerd: one
    // write(2) per frame) adds more as it goes; a caller that went on at once would take them
    // a frame per call, so it should let them gather first.
    bool drained = false;
  };

  ~Writer();  // does NOT seal: a writer destroyed by shutdown is resumed at the next start
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Moves at most `max_bytes` from `fd` (a FIFO opened O_NONBLOCK) into the journal with
  // splice(2) (falls back to read+write where splice is refused), then rotates and evicts as
  // the limits say. Throws std::system_error on a write error (disk full, ...) when nothing
  // was moved; bytes it could not take are still in the FIFO, and a rotation that failed
  // left the writer on its segment (it is tried again next time).
  Result SpliceFrom(int fd, std::size_t max_bytes);
  // Appends bytes (tests, and sources that are not FIFOs). Rotates and evicts the same way.
  // Throws std::system_error on a write error.
  void Append(std::string_view bytes);
  // Cuts the active segment after its last complete frame and returns the bytes cut (the
  // start of a frame whose rest is still in the FIFO), so that they can be carried elsewhere
  // when the journal cannot take more. Throws std::system_error on an I/O error.
  std::string CutAtFrameBoundary();
  // The session is over (EOF, or the journal is given up): the active segment becomes sealed
  // and its marker is removed. Never throws; errors are logged (a marker that could not be
  // removed is sealed again at the next start).
  void Seal();
  uint64_t segment() const;  // the active segment

 private:
  friend class Journal;
  struct State;
  // The segment `seq` of `fifo_path`'s session; `fd` is its file (O_RDWR) holding `size`
  // bytes, or empty while it has no file yet.
  Writer(std::shared_ptr<Journal> journal, uint64_t seq, std::string fifo_path, UniqueFd fd,
         uint64_t size);
  std::shared_ptr<Journal> journal_;
  std::unique_ptr<State> state_;
};

}  // namespace skald
