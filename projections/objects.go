package projections

// schemaObjects names, for each projection's schema (its scripts in
// schema/, by the name base.schema gives), the tables, indexes and
// triggers the scripts create. The check at every open reads this list
// (base.Objects) rather than the scripts: reading them from the binary
// cost a command about 0.6 ms. TestObjects keeps the list equal to what
// the scripts declare.
var schemaObjects = map[string][]string{
	"sessions":    {"p_sessions", "p_sessions_active", "p_sessions_active_left", "p_sessions_active_right", "p_sessions_from", "p_sessions_key", "p_sessions_work", "p_sessions_work_end", "p_sessions_work_start"},
	"claims":      {"p_claims", "p_claims_from", "p_claims_held", "p_claims_held_from", "p_claims_held_left", "p_claims_held_right", "p_claims_held_work", "p_claims_key", "p_claims_session", "p_claims_token", "p_claims_work"},
	"checkpoints": {"p_checkpoints", "p_checkpoints_session", "p_contexts", "p_contexts_session"},
	"bindings":    {"p_bindings", "p_bindings_from", "p_bindings_key", "p_bindings_session"},
	"work":        {"p_goals", "p_goals_current", "p_goals_from", "p_goals_key", "p_rules", "p_rules_current", "p_rules_from", "p_rules_key", "p_sources", "p_sources_current", "p_sources_from", "p_sources_key", "p_work_counts", "p_work_items", "p_work_items_current", "p_work_items_from", "p_work_items_goal", "p_work_items_key", "p_work_items_milestone", "p_work_queue", "p_work_queue_goal", "p_work_queue_order"},
	"seats":       {"p_rig_log", "p_rig_log_rig", "p_seat_log", "p_seat_log_address", "p_seat_sessions", "p_seats", "p_seats_key", "p_seats_rig"},
	"worklog":     {"p_work_log"},
	"knowledge":   {"p_knowledge", "p_knowledge_ended", "p_knowledge_from", "p_knowledge_key", "p_knowledge_live", "p_knowledge_num", "p_knowledge_open"},
	"executions":  {"p_executions", "p_executions_key", "p_executions_open", "p_executions_open_key", "p_executions_work"},
	"search":      {"p_search", "p_search_df", "p_search_fts", "p_search_head", "p_search_head_fts", "p_search_key", "p_search_open", "p_search_rest", "p_search_source", "p_search_term", "p_search_term_doc", "p_search_tok", "p_search_tok_v"},
}
