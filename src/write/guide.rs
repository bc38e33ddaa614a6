//! How the DM is asked for proposals: a short section of the system prompt, and the same
//! format as a tool (function) for providers that support tools. The fenced block is the
//! fallback for models and servers without tools; both carry the JSON of [`super::Change`].

/// The tool's name.
pub(crate) const TOOL_NAME: &str = "propose_canon_changes";

/// The tool's description.
pub(crate) const TOOL_DESCRIPTION: &str = "Propose changes to the campaign's canon that your reply makes true (damage, healing, deaths, moves, items, time passing, events, threads, new NPCs or places). The GM reviews them before they are written.";

/// The section of the system prompt that asks for proposals.
pub(crate) const GUIDE: &str = r#"## Keeping canon current
When your reply changes the campaign's facts (someone is hurt, healed or dies, someone moves, an item is gained or lost, time passes, a notable event happens, a thread begins or is resolved, a new named NPC or place appears), propose the changes after your narration in one fenced block. The GM reviews them; never mention the block in your prose, and add no block when nothing changed.
```vaultdm-changes
[{"op": "set", "entity": "<name>", "field": "hp", "value": 15},
 {"op": "move", "entity": "party", "to": "<place>"}]
```
Ops: set (entity, field: hp, max_hp, ac, level, gold, status, disposition or role; value, "+N"/"-N" for relative), move (entity or "party", to), add / remove (entity, item, field: inventory or conditions), time (advance: days, time: "morning"), event (text), new_thread (title, priority, summary, next), resolve (thread), prioritise (thread, priority), next (thread, next), new_npc (name, role, location, disposition, summary), new_location (name, parent, description). Use names as canon gives them."#;

/// The tool, as sent with the request.
pub(crate) fn tool_spec() -> crate::llm::ToolSpec {
    crate::llm::ToolSpec {
        name: TOOL_NAME.into(),
        description: TOOL_DESCRIPTION.into(),
        parameters: tool_parameters(),
    }
}

/// The JSON Schema of the tool's arguments: `{"changes": [...]}`.
pub(crate) fn tool_parameters() -> serde_json::Value {
    let s = |d: &str| serde_json::json!({"type": "string", "description": d});
    serde_json::json!({
        "type": "object",
        "properties": {
            "changes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "op": {"type": "string", "enum": [
                            "set", "move", "add", "remove", "time", "event", "new_thread",
                            "resolve", "prioritise", "next", "new_npc", "new_location"
                        ]},
                        "entity": s("a PC or NPC by name, or \"party\" for move"),
                        "field": s("set: hp, max_hp, ac, level, gold, status, disposition, role; add/remove: inventory or conditions"),
                        "value": {"type": ["string", "integer"], "description": "set: the new value; \"+N\"/\"-N\" is relative"},
                        "to": s("move: the location"),
                        "item": s("add/remove: the item or condition"),
                        "advance": {"type": "integer", "description": "time: days that pass"},
                        "day": {"type": "integer", "description": "time: the day to set; event: its day"},
                        "time": s("time: the time of day"),
                        "text": s("event: one fact"),
                        "title": s("new_thread: its title"),
                        "thread": s("resolve/prioritise/next: the thread"),
                        "priority": s("urgent, high, medium or low"),
                        "summary": s("new_thread/new_npc: one line"),
                        "next": s("new_thread/next: the next step"),
                        "name": s("new_npc/new_location: the name"),
                        "role": s("new_npc: what they do"),
                        "location": s("new_npc: where they are"),
                        "disposition": s("new_npc: attitude to the party"),
                        "parent": s("new_location: the place it is in"),
                        "description": s("new_location: one paragraph")
                    },
                    "required": ["op"]
                }
            }
        },
        "required": ["changes"]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guide_example_is_a_valid_proposal_shape() {
        let block = GUIDE
            .split("```vaultdm-changes\n")
            .nth(1)
            .and_then(|r| r.split("\n```").next())
            .expect("example block");
        let v: Vec<crate::write::Change> = serde_json::from_str(block).expect("parses");
        assert_eq!(v.len(), 2);
    }
}
