"""The long tier: slow tests kept out of CI (`make test-long`, not `make test-all`).

CI (`make test-all`) must finish well inside its time limit on a 2-core machine, so its slow tier
holds one design of each kind of whole-accelerator check: the `generate` flow end to end, random
draws of the design space, an IVF-PQ design with stalls, watchdog and both harnesses, a padded
streamed-and-fetched design, a multi-beat code design, a streamed OPQ matrix, the driver backends,
the hostile-input runs, the sweep report, Falcon's graph pipeline and the published-design
comparison. The entries below are more designs of the same kinds, fresh yosys syntheses, model
trends and the latency model's runs: `conftest.py` marks them `long` (an entry names a test, or
one parametrisation of it by its full node id), and `tests/test_long_tier.py` checks that every
entry still names a slow test.
"""

LONG = (
    # more IVF-PQ designs of the kinds the slow tier simulates
    "tests/codegen/test_channel_bound.py::test_rtl_is_bit_exact_and_cycles_agree_with_the_model",
    "tests/codegen/test_ivf_stream_faces.py::test_rtl_is_bit_exact_and_cycles_agree_with_the_model",
    "tests/codegen/test_k100_skew.py::test_dse_k100_design_on_skewed_lists_is_within_5_percent_of_the_model",
    "tests/codegen/test_lanes_d96.py::test_rtl_with_96_lut_lanes_is_bit_exact",
    "tests/codegen/test_lanes_d96.py::test_hls_with_96_lut_lanes_is_bit_exact",
    "tests/codegen/test_lut_round_robin.py::test_rtl_is_bit_exact_and_cycles_agree_with_the_model",
    "tests/codegen/test_multibeat_faces.py::test_rtl_is_bit_exact_and_cycles_agree_with_the_model[d2-m2-u55c]",
    "tests/codegen/test_multibeat_faces.py::test_rtl_is_bit_exact_and_cycles_agree_with_the_model[d3-m3-zcu104]",
    "tests/codegen/test_multibeat_faces.py::test_rtl_is_bit_exact_and_cycles_agree_with_the_model[d768-m32-zcu104]",
    "tests/codegen/test_multibeat_faces.py::test_rtl_is_bit_exact_and_cycles_agree_with_the_model[d768-m96-u55c]",
    "tests/codegen/test_padded_faces.py::test_rtl_is_bit_exact_and_cycles_agree_with_the_model[d100-opq-fetched]",
    "tests/codegen/test_padded_faces.py::test_rtl_is_bit_exact_and_cycles_agree_with_the_model[d100-opq-lanes8]",
    "tests/codegen/test_padded_faces.py::test_rtl_is_bit_exact_and_cycles_agree_with_the_model[d100-opq-streamed]",
    "tests/codegen/test_padded_faces.py::test_rtl_is_bit_exact_and_cycles_agree_with_the_model[d300-streamed]",
    "tests/codegen/test_padded_faces.py::test_rtl_is_bit_exact_and_cycles_agree_with_the_model[d96-lut-lanes4]",
    "tests/codegen/test_rtl.py::test_result_keys_equal_the_reference_model[sift-k1-hsmpqg]",
    "tests/codegen/test_rtl.py::test_result_keys_equal_the_reference_model[sift-k100-selk]",
    "tests/codegen/test_rtl.py::test_result_keys_equal_the_reference_model[sift-lut-buffer]",
    "tests/codegen/test_rtl.py::test_result_keys_equal_the_reference_model[sift-opq-goal]",
    "tests/codegen/test_rtl.py::test_cycles_per_query_agree_with_the_model[sift-k1-hsmpqg]",
    "tests/codegen/test_rtl.py::test_cycles_per_query_agree_with_the_model[sift-k100-selk]",
    "tests/codegen/test_rtl.py::test_cycles_per_query_agree_with_the_model[sift-lut-buffer]",
    "tests/codegen/test_rtl.py::test_cycles_per_query_agree_with_the_model[sift-opq-goal]",
    "tests/codegen/test_rtl.py::test_recall_equals_the_explorers_hardware_recall",
    "tests/codegen/test_rtl.py::test_cli_generate_rtl_and_sim",
    "tests/codegen/test_rtl_fast.py::test_fast_harness_gives_the_keys_and_cycles_of_the_cocotb_harness[sift-k1-hsmpqg]",
    "tests/codegen/test_rtl_fast.py::test_fast_harness_gives_the_keys_and_cycles_of_the_cocotb_harness[sift-k10-ahpq]",
    "tests/codegen/test_rtl_fast.py::test_fast_harness_gives_the_keys_and_cycles_of_the_cocotb_harness[sift-k100-selk]",
    "tests/codegen/test_rtl_fast.py::test_fast_harness_gives_the_keys_and_cycles_of_the_cocotb_harness[sift-lut-buffer]",
    "tests/codegen/test_rtl_fast.py::test_fast_harness_gives_the_keys_and_cycles_of_the_cocotb_harness[sift-opq-goal]",
    "tests/codegen/test_rtl_fast.py::test_fast_harness_serves_both_tiers_as_the_cocotb_harness",
    "tests/codegen/test_rtl_load_split.py::test_u250_mixed_width_load_finishes_bit_exact",
    "tests/codegen/test_tiers.py::test_host_driver_places_and_reads_the_tier_images",
    "tests/codegen/test_tiers.py::test_both_designs_return_the_reference_keys",
    "tests/codegen/test_tiers.py::test_measured_cycles_and_speedup_agree_with_the_model",
    "tests/codegen/test_tiers.py::test_tiered_design_under_stalls_and_runtime_parameters",
    "tests/codegen/test_wide_opq_faces.py::test_rtl_is_bit_exact_and_cycles_agree_with_the_model[uram]",
    "tests/driver/test_ap_ctrl.py::test_block_protocol_through_the_drivers_register_calls",
    "tests/flow/test_design_fuzz.py::test_dse_chosen_designs_with_fetched_lut_centroids_are_bit_exact",
    "tests/flow/test_design_fuzz.py::test_dse_chosen_design_with_a_streamed_opq_matrix_is_bit_exact",
    "tests/flow/test_design_fuzz.py::test_draws_run_as_jobs_on_an_existing_cluster",
    "tests/flow/test_design_fuzz.py::test_corner_draws_generate_and_simulate_bit_exact[7]",
    "tests/flow/test_design_fuzz.py::test_corner_draws_generate_and_simulate_bit_exact[13]",
    "tests/flow/test_generate_d100.py::test_the_design_the_dse_gave_the_user_builds_and_is_bit_exact",
    "tests/flow/test_generate_d100.py::test_generate_on_the_users_d100_set_simulates_bit_exact",
    # more graph pipelines
    "tests/driver/test_graph_driver.py::test_rtl_sim_runs_the_rtl_kernel_of_the_root",
    "tests/sim/test_falcon_across_rtl.py::test_results_equal_reference_and_batch_matches_model",
    "tests/sim/test_falcon_across_rtl.py::test_channel_sharing_costs_cycles",
    "tests/sim/test_falcon_rtl.py::test_results_equal_reference_and_cycles_match_model[dst-8x4]",
    "tests/sim/test_falcon_rtl.py::test_results_equal_reference_and_cycles_match_model[dst-2x3-l32]",
    "tests/sim/test_falcon_rtl.py::test_fast_harness_gives_the_keys_and_cycles_of_the_cocotb_harness",
    "tests/sim/test_falcon_rtl.py::test_other_memory_latency",
    "tests/sim/test_falcon_rtl.py::test_block_protocol_of_the_kernel",
    "tests/sim/test_vmodel.py::test_a_quick_build_keeps_the_rtl_timing",
    "tests/sim/test_vmodel.py::test_back_door_round_trip_and_refusals",
    # fresh yosys syntheses against the calibrated resource models
    "tests/model/test_control.py::test_held_out_design_within_ten_percent_of_yosys",
    "tests/pe/test_axi_reader.py::test_fresh_synthesis_matches_calibration",
    "tests/pe/test_glue.py::test_fresh_synthesis_matches_calibrated_model",
    # model trends, the latency model's runs, retraining and the full text set
    "tests/model/test_dse.py::test_designs_shift_with_parameters_as_in_fig_6_8",
    # two whole DSEs, one timing every back option (53 min wall at load 17); the fast tier checks the
    # pruned group equals the exhaustive one (test_dominated_back_options_are_those_the_pruning_drops)
    "tests/model/test_dse_speed.py::test_the_dse_chooses_what_the_exhaustive_dse_chooses",
    "tests/model/test_dse_cli.py::test_dse_with_a_tail_latency_slo",
    "tests/model/test_latency.py::test_queries_alone_are_the_sum_of_server_latencies",
    "tests/model/test_latency.py::test_back_span_is_the_pq_decode_schedule_when_luts_arrive_in_time",
    "tests/model/test_latency.py::test_latency_grows_with_load_and_is_deterministic",
    "tests/model/test_latency.py::test_slo_picks_the_fastest_design_that_meets_it",
    "tests/model/test_latency.py::test_slo_at_a_load_and_explanations",
    "tests/model/test_latency.py::test_dse_json_reports_percentiles_of_every_kept_design",
    "tests/model/test_latency_rtl.py::test_each_query_latency_matches_the_model",
    "tests/model/test_latency_rtl.py::test_the_model_explains_the_spread",
    "tests/model/test_latency_rtl.py::test_a_batch_ends_when_the_tandem_model_says",
    "tests/model/test_scaleout.py::test_partition_curve_grows_with_the_tail",
    "tests/model/test_scaleout.py::test_split_by_vector_shrinks_the_search",
    "tests/model/test_skew.py::test_dse_writes_the_tiered_design",
    "tests/explore/test_holdout.py::test_promised_nprobe_meets_the_goal_for_indexes_retrained_with_other_seeds",
    "tests/datasets/test_textset.py::test_full_text_set",
    # a second whole sweep (every board and goal's DSE again) for its RAG section; the section
    # itself is tested from data in tests/report/test_rag_section.py
    "tests/report/test_sweep.py::test_rag_section",
)


def is_long(nodeid: str) -> bool:
    """Whether the test `nodeid` is in the long tier: an entry names it or its function."""
    return nodeid in LONG_SET or nodeid.split("[")[0] in LONG_SET


LONG_SET = frozenset(LONG)
