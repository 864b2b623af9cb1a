#include "plugin/loki/stream_selector.h"

#include <functional>

namespace skald {

StreamSelector::StreamSelector(std::string text) {
  const std::size_t h = std::hash<std::string_view>{}(text);
  rep_ = std::make_shared<const Rep>(Rep{std::move(text), h});
}

std::size_t StreamSelector::EmptyHash() {
  static const std::size_t kHash = std::hash<std::string_view>{}(std::string_view());
  return kHash;
}

}  // namespace skald
