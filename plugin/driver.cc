#include "plugin/driver.h"

#include <re2/re2.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "pipeline_stages/config_error.h"
#include "pipeline_stages/pipeline.h"
#include "pipeline_stages/relabel.h"
#include "plugin/docker_template.h"

namespace skald {

namespace {

// Docker attribute names become label names: '.' and '-' turn into '_' (as the Go driver
// does); anything else Loki would refuse also becomes '_'.
std::string AttributeLabelName(std::string_view key) {
  std::string out;
  for (char c : key) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  return out;
}

std::vector<std::string> SplitComma(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

constexpr std::chrono::milliseconds kPipelineFlushInterval{200};

std::size_t LinesBytes(const std::vector<LogLine>& lines) {
  std::size_t bytes = 0;
  for (const LogLine& l : lines) bytes += l.line.size() + sizeof(LogLine);
  return bytes;
}

}  // namespace

StreamLabelSet BuildContainerLabels(const ContainerInfo& info, const LogOptions& options,
                                    const std::string& hostname) {
  std::map<std::string, std::string> labels;
  std::stringstream ss(options.external_labels);
  std::string pair;
  while (std::getline(ss, pair, ',')) {
    auto eq = pair.find('=');
    if (eq == std::string::npos) continue;  // validated by ParseLogOptions
    labels[pair.substr(0, eq)] = DockerTemplate::Parse(pair.substr(eq + 1)).Render(info, hostname);
  }

  // Docker's ExtraAttributes: labels, labels-regex, env, env-regex (env wins on a clash).
  std::map<std::string, std::string> attrs;
  for (const std::string& name : SplitComma(options.labels)) {
    if (auto it = info.container_labels.find(name); it != info.container_labels.end()) {
      attrs[AttributeLabelName(name)] = it->second;
    }
  }
  if (!options.labels_regex.empty()) {
    RE2 re(options.labels_regex, RE2::Quiet);
    for (const auto& [k, v] : info.container_labels) {
      if (RE2::PartialMatch(k, re)) attrs[AttributeLabelName(k)] = v;
    }
  }
  for (const std::string& name : SplitComma(options.env)) {
    if (auto v = info.EnvValue(name)) attrs[AttributeLabelName(name)] = *v;
  }
  if (!options.env_regex.empty()) {
    RE2 re(options.env_regex, RE2::Quiet);
    for (const std::string& kv : info.container_env) {
      auto eq = kv.find('=');
      if (eq == std::string::npos) continue;
      std::string k = kv.substr(0, eq);
      if (RE2::PartialMatch(k, re)) attrs[AttributeLabelName(k)] = kv.substr(eq + 1);
    }
  }
  const std::pair<const char*, const char*> kDockerLabels[] = {
      {"com.docker.swarm.service.name", "swarm_service"},
      {"com.docker.stack.namespace", "swarm_stack"},
      {"com.docker.compose.service", "compose_service"},
      {"com.docker.compose.project", "compose_project"},
  };
  for (const auto& [docker_label, label] : kDockerLabels) {
    auto it = info.container_labels.find(docker_label);
    if (it != info.container_labels.end() && !it->second.empty()) attrs[label] = it->second;
  }
  for (auto& [k, v] : attrs) labels[k] = v;
  if (!hostname.empty()) labels["host"] = hostname;
  if (options.tag) labels["tag"] = DockerTemplate::Parse(*options.tag).Render(info, hostname);

  return StreamLabelSet(labels.begin(), labels.end());
}

struct Driver::Stream {
  uint64_t id;
  std::string file;
  ContainerInfo info;
  LogOptions options;
  std::shared_ptr<LokiClient> client;
  std::string rendered_labels[2];  // stdout, stderr
  std::atomic<bool> stop_requested{false};
  bool dropped_by_relabel = false;  // a relabel rule dropped the stream: count, never send
  // With a pipeline (shipping thread only):
  std::unique_ptr<stages::Pipeline> pipeline;
  stages::LabelSet labels[2];  // container labels + source, the pipeline's input
  std::vector<stages::Entry> out;
  StreamLabelSet last_labels;  // the label set rendered last, and its rendering
  std::string last_rendered;
};

namespace {

std::unique_ptr<stages::Pipeline> BuildPipeline(const LogOptions& options,
                                                stages::PipelineObserver* observer) {
  try {
    if (!options.pipeline_stages.empty()) {
      return stages::Pipeline::FromYaml(options.pipeline_stages, observer);
    }
    if (!options.pipeline_stage_file.empty()) {
      return stages::Pipeline::FromFile(options.pipeline_stage_file, observer);
    }
  } catch (const stages::ConfigError& e) {
    throw OptionError(
        std::string("skald: invalid log-opt ") +
        (options.pipeline_stages.empty() ? "loki-pipeline-stage-file" : "loki-pipeline-stages") +
        ": " + e.what());
  }
  return nullptr;
}

}  // namespace

Driver::Driver(DriverConfig config, MetricsRegistry& metrics)
    : config_(std::move(config)),
      metrics_(metrics),
      observer_(metrics),
      dropped_queue_full_(metrics.GetCounter("skald_entries_dropped_total",
                                             "Entries not delivered, by reason.",
                                             {{"reason", "queue_full"}})),
      dropped_relabel_(metrics.GetCounter("skald_entries_dropped_total",
                                          "Entries not delivered, by reason.",
                                          {{"reason", "relabel_drop"}})),
      streams_started_(
          metrics.GetCounter("skald_streams_started_total", "StartLogging calls accepted.")),
      pending_gauge_(metrics.GetGauge("skald_entries_pending",
                                      "Lines read and neither delivered nor dropped yet.")),
      live_streams_gauge_(metrics.GetGauge("skald_streams_live", "Containers being logged.")) {
  // Series that Loki clients fill in: present (at 0) before the first container, so that a
  // scrape always shows read, sent, dropped and pending together.
  metrics.GetCounter("skald_entries_sent_total", "Entries delivered to Loki.");
  reader_ = std::make_unique<FifoReader>(*this, metrics);
  shipper_ = std::thread([this] { ShipLoop(); });
}

Driver::~Driver() { Shutdown(std::chrono::milliseconds(0)); }

std::shared_ptr<LokiClient> Driver::ClientFor(const LokiClientConfig& client_config) {
  std::string key = client_config.Key();
  std::lock_guard lock(mu_);
  auto& slot = clients_[key];
  if (!slot) slot = std::make_shared<LokiClient>(client_config, metrics_);
  return slot;
}

void Driver::StartLogging(const std::string& file, const ContainerInfo& info) {
  LogOptions options = ParseLogOptions(info.config, config_.env_defaults);
  StreamLabelSet labels = BuildContainerLabels(info, options, config_.hostname);

  auto stream = std::make_shared<Stream>();
  stream->file = file;
  stream->info = info;
  stream->options = options;
  if (!options.relabel_config.empty()) {
    stages::RelabelConfig relabel;
    try {
      relabel = stages::RelabelConfig::FromYaml(options.relabel_config);
    } catch (const stages::ConfigError& e) {
      throw OptionError(std::string("skald: invalid log-opt loki-relabel-config: ") + e.what());
    }
    std::vector<stages::Label> as_stage_labels;
    for (const auto& [k, v] : labels) as_stage_labels.push_back({k, v});
    stages::LabelSet relabeled = stages::LabelSet::FromVector(std::move(as_stage_labels));
    stream->dropped_by_relabel = !relabel.Apply(relabeled);
    labels.clear();
    relabeled.ForEach([&](std::string_view k, std::string_view v) { labels.emplace_back(k, v); });
  }
  stream->pipeline = BuildPipeline(options, &observer_);
  for (LogSource source : {LogSource::kStdout, LogSource::kStderr}) {
    StreamLabelSet with_source = labels;
    with_source.emplace_back("source", std::string(LogSourceName(source)));
    std::sort(with_source.begin(), with_source.end());
    std::string error;
    if (!stream->dropped_by_relabel &&
        !RenderStreamLabels(with_source, stream->rendered_labels[static_cast<int>(source)],
                            &error)) {
      throw OptionError("skald: the container's labels are not valid for Loki: " + error);
    }
    std::vector<stages::Label> as_stage_labels;
    for (const auto& [k, v] : with_source) as_stage_labels.push_back({k, v});
    stream->labels[static_cast<int>(source)] =
        stages::LabelSet::FromVector(std::move(as_stage_labels));
  }
  stream->client = ClientFor(options.client);
  {
    std::lock_guard lock(mu_);
    if (stopping_) throw OptionError("skald: the plugin is shutting down");
    if (stream_by_file_.count(file)) {
      throw OptionError("skald: already logging " + file);
    }
    stream->id = next_id_++;
    streams_[stream->id] = stream;
    stream_by_file_[file] = stream->id;
    live_streams_gauge_.Set(static_cast<int64_t>(streams_.size()));
  }
  try {
    reader_->Add(stream->id, file, options.max_line_size);
  } catch (...) {
    std::lock_guard lock(mu_);
    streams_.erase(stream->id);
    stream_by_file_.erase(file);
    live_streams_gauge_.Set(static_cast<int64_t>(streams_.size()));
    throw;
  }
  streams_started_.Add();
  spdlog::info("logging container {} ({}) to {}", info.ID(), info.Name(),
               RedactUrl(options.client.url));
}

void Driver::StopLogging(const std::string& file) {
  std::lock_guard lock(mu_);
  auto it = stream_by_file_.find(file);
  if (it == stream_by_file_.end()) return;
  streams_[it->second]->stop_requested = true;
}

void Driver::OnLines(uint64_t stream_id, std::vector<LogLine>& lines) {
  Batch batch{stream_id, std::move(lines), 0, false};
  batch.bytes = LinesBytes(batch.lines);
  lines = {};
  {
    std::lock_guard lock(mu_);
    queued_bytes_ += batch.bytes;
    queued_lines_ += batch.lines.size();
    queue_.push_back(std::move(batch));
    // Over budget: drop the oldest lines (never an end-of-stream marker).
    while (queued_bytes_ > config_.max_queued_bytes) {
      auto victim = std::find_if(queue_.begin(), queue_.end(),
                                 [](const Batch& b) { return !b.end && !b.lines.empty(); });
      if (victim == queue_.end() || victim == queue_.end() - 1) break;
      dropped_queue_full_.Add(victim->lines.size());
      queued_bytes_ -= victim->bytes;
      queued_lines_ -= victim->lines.size();
      queue_.erase(victim);
    }
  }
  queue_cv_.notify_one();
}

void Driver::OnEnd(uint64_t stream_id, bool /*corrupt*/) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(Batch{stream_id, {}, 0, true});
  }
  queue_cv_.notify_one();
}

void Driver::Ship(Stream& stream, std::vector<LogLine>& lines) {
  if (stream.dropped_by_relabel) {
    dropped_relabel_.Add(lines.size());
    return;
  }
  if (!stream.pipeline) {
    for (LogLine& l : lines) {
      LokiEntry e;
      e.labels = stream.rendered_labels[static_cast<int>(l.source)];
      e.timestamp_ns = l.time_nano;
      e.line = std::move(l.line);
      stream.client->Push(std::move(e));
    }
    return;
  }
  for (LogLine& l : lines) {
    stages::Entry e;
    e.labels = stream.labels[static_cast<int>(l.source)];
    e.timestamp_ns = l.time_nano;
    e.line = std::move(l.line);
    stream.pipeline->Process(std::move(e), stream.out);
  }
  PushPipelineOutput(stream, stream.out);
}

void Driver::PushPipelineOutput(Stream& stream, std::vector<stages::Entry>& entries) {
  StreamLabelSet labels;
  for (stages::Entry& e : entries) {
    labels.clear();
    e.labels.ForEach([&](std::string_view k, std::string_view v) { labels.emplace_back(k, v); });
    if (labels != stream.last_labels) {
      std::string error;
      if (!RenderStreamLabels(labels, stream.last_rendered, &error)) {
        observer_.EntryDropped("invalid_labels");
        stream.last_labels.clear();
        continue;
      }
      stream.last_labels = labels;
    }
    LokiEntry out;
    out.labels = stream.last_rendered;
    out.timestamp_ns = e.timestamp_ns;
    out.line = std::move(e.line);
    out.tenant = std::move(e.tenant);
    for (auto& m : e.structured_metadata) {
      out.structured_metadata.emplace_back(std::move(m.name), std::move(m.value));
    }
    stream.client->Push(std::move(out));
  }
  entries.clear();
}

void Driver::FlushPipelines(bool final_for_all) {
  std::vector<std::shared_ptr<Stream>> with_pipeline;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, s] : streams_) {
      if (s->pipeline) with_pipeline.push_back(s);
    }
  }
  int64_t now = stages::Clock::System().NowNs();
  for (const auto& s : with_pipeline) {
    s->pipeline->Flush(now, final_for_all, s->out);
    PushPipelineOutput(*s, s->out);
  }
}

void Driver::FinishStream(uint64_t stream_id) {
  std::shared_ptr<Stream> stream;
  {
    std::lock_guard lock(mu_);
    auto it = streams_.find(stream_id);
    if (it == streams_.end()) return;
    stream = it->second;
  }
  if (stream->pipeline) {  // the end of the stream releases what stages hold
    stream->pipeline->Flush(stages::Clock::System().NowNs(), true, stream->out);
    PushPipelineOutput(*stream, stream->out);
  }
  {
    std::lock_guard lock(mu_);
    streams_.erase(stream_id);
    stream_by_file_.erase(stream->file);
    live_streams_gauge_.Set(static_cast<int64_t>(streams_.size()));
  }
  spdlog::info("container {} ({}): log stream ended{}", stream->info.ID(), stream->info.Name(),
               stream->stop_requested ? "" : " before StopLogging");
  idle_cv_.notify_all();
}

void Driver::ShipLoop() {
  auto last_flush = std::chrono::steady_clock::now();
  for (;;) {
    Batch batch;
    std::shared_ptr<Stream> stream;
    {
      std::unique_lock lock(mu_);
      bool ready = queue_cv_.wait_for(lock, kPipelineFlushInterval,
                                      [&] { return !queue_.empty() || stopping_; });
      if (!ready || std::chrono::steady_clock::now() - last_flush >= kPipelineFlushInterval) {
        // Release what stages hold past their wait (multiline max_wait_time, limit).
        lock.unlock();
        FlushPipelines(false);
        last_flush = std::chrono::steady_clock::now();
        continue;
      }
      if (queue_.empty()) {  // stopping and drained
        lock.unlock();
        FlushPipelines(true);
        return;
      }
      batch = std::move(queue_.front());
      queue_.pop_front();
      queued_bytes_ -= batch.bytes;
      queued_lines_ -= batch.lines.size();
      in_flight_lines_ += batch.lines.size();
      auto it = streams_.find(batch.stream_id);
      if (it != streams_.end()) stream = it->second;
    }
    if (batch.end) {
      FinishStream(batch.stream_id);
    } else if (stream) {
      Ship(*stream, batch.lines);
    }
    {
      std::lock_guard lock(mu_);
      in_flight_lines_ -= batch.lines.size();
    }
    idle_cv_.notify_all();
  }
}

bool Driver::WaitIdle(std::chrono::milliseconds deadline) {
  std::unique_lock lock(mu_);
  return idle_cv_.wait_for(
      lock, deadline, [&] { return streams_.empty() && queue_.empty() && in_flight_lines_ == 0; });
}

void Driver::Shutdown(std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  if (reader_) reader_->Stop();
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !shipper_.joinable()) return;
    stopping_ = true;
  }
  queue_cv_.notify_all();
  if (shipper_.joinable()) shipper_.join();  // hands every queued line to its client
  std::map<std::string, std::shared_ptr<LokiClient>> clients;
  {
    std::lock_guard lock(mu_);
    clients.swap(clients_);
  }
  for (auto& [key, client] : clients) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    client->Stop(std::max(left, std::chrono::milliseconds(0)));
  }
}

std::size_t Driver::LiveStreams() const {
  std::lock_guard lock(mu_);
  return streams_.size();
}

uint64_t Driver::PendingEntries() const {
  std::lock_guard lock(mu_);
  uint64_t pending = queued_lines_ + in_flight_lines_;
  for (const auto& [key, client] : clients_) pending += client->Pending();
  return pending;
}

void Driver::UpdateGauges() { pending_gauge_.Set(static_cast<int64_t>(PendingEntries())); }

}  // namespace skald
