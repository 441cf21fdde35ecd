"""The output schemas of Context Graph's state group: the seed's for get_neuromodulation and homeostatic_status, as it
writes them. utl_status has none in the seed, and is published without one."""
from __future__ import annotations

NEUROMODULATION_OUTPUT = {
    "type": "object",
    "properties": {
        "dopamine": {"type": "number", "description": "Reward signal → hopfield.beta"},
        "serotonin": {"type": "number", "description": "Exploration → fuse_moe.top_k"},
        "noradrenaline": {"type": "number", "description": "Arousal → attention.temp"},
        "acetylcholine": {"type": "number", "description": "Plasticity → learning_rate"},
        "current_mode": {"type": "string", "enum": ["exploit", "explore", "balanced"]},
    },
}

HOMEOSTATIC_OUTPUT = {
    "type": "object",
    "properties": {
        "mean_importance": {"type": "number"},
        "importance_variance": {"type": "number"},
        "quarantined_nodes": {"type": "integer"},
        "semantic_cancer_suspects": {"type": "integer"},
        "last_scaling_time": {"type": "string", "format": "date-time"},
        "health_score": {"type": "number", "minimum": 0, "maximum": 1},
    },
}
