# skald-stage-oracle: runs pipeline cases (JSON lines on stdin) through skald's stages and
# answers with the outputs, drops or config error; the skald side of the differential fuzzer
# tests/e2e/loki/diff-fuzz.sh (Promtail's stages are the other side).
add_executable(skald-stage-oracle ${CMAKE_CURRENT_LIST_DIR}/stage_oracle.cc)
target_link_libraries(skald-stage-oracle PRIVATE skald_pipeline_stages
  nlohmann_json::nlohmann_json)
