"""The ``[memory]`` configuration section.

```toml
[memory]
backend = "sql"                 # memory | sql
auto_context = true             # inject top memories as a system message each turn
auto_context_limit = 3
auto_context_max_tokens = 1500  # budget of the injected block
auto_context_deadline_ms = 300  # skipped (never waited for) when the search is slower
[memory.search]
vector_weight = 0.7
keyword_weight = 0.3
min_score = 0.1
limit = 5
fusion = "weighted"             # weighted | rrf
[memory.search.temporal_decay]
enabled = false
half_life_days = 30
[memory.search.mmr]
enabled = false
lambda_ = 0.7
[memory.chunking]
size = 1200                     # characters, cut on word boundaries
overlap = 200
[memory.embeddings]
base_url = "https://api.openai.com/v1"   # unset = keyword search only
model = "text-embedding-3-small"
api_key = { env = "OPENAI_API_KEY" }
```
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from beamclaw_obs import Secret, Section


class TemporalDecaySettings(Section):
    """``[memory.search.temporal_decay]``: older dated memories score lower."""

    enabled: bool = False
    half_life_days: float = Field(default=30.0, gt=0)
    """After this many days a memory's score is halved."""
    categories: list[Literal["core", "daily", "conversation", "custom"]] = Field(
        default_factory=lambda: ["daily", "conversation"]
    )
    """Categories that decay; ``core`` facts (MEMORY.md, bootstrap files) are evergreen."""


class MmrSettings(Section):
    """``[memory.search.mmr]``: maximal-marginal-relevance re-ranking for diversity."""

    enabled: bool = False
    lambda_: float = Field(default=0.7, ge=0.0, le=1.0)
    """1.0 = pure relevance, 0.0 = pure diversity."""


class SearchSettings(Section):
    """``[memory.search]``: ranking and fusion."""

    vector_weight: float = Field(default=0.7, ge=0.0)
    keyword_weight: float = Field(default=0.3, ge=0.0)
    min_score: float = Field(default=0.1, ge=0.0, le=1.0)
    """Hits whose final score (in ``[0, 1]``) is below this are dropped."""
    limit: int = Field(default=5, ge=1, le=100)
    """Default number of hits."""
    min_similarity: float = Field(default=0.2, ge=-1.0, le=1.0)
    """Vector candidates below this cosine similarity are not candidates at all (without
    it min-max fusion would promote the least-bad unrelated text to the top)."""
    fusion: Literal["weighted", "rrf"] = "weighted"
    """``weighted``: min-max normalised weighted sum; ``rrf``: reciprocal-rank fusion."""
    rrf_k: int = Field(default=60, ge=1)
    candidate_multiplier: int = Field(default=4, ge=1, le=50)
    """Each retriever contributes ``limit * candidate_multiplier`` candidates to fusion."""
    max_query_chars: int = Field(default=2000, ge=16)
    """Longer queries are truncated before tokenising and embedding."""
    store_check_ms: int = Field(default=1_000, ge=0)
    """How long searches trust the in-process index after reading the store's write
    counters. This process's own writes reach search at once; another process's (a CLI
    command, another node on the same database) within this time. 0: read the counters
    before every search (one read per turn with auto-context)."""
    stopwords: list[str] = Field(default_factory=lambda: ["en"])
    """Stopword languages (en, de, nl, fr, es, pt, it, ru, sv)."""
    temporal_decay: TemporalDecaySettings = Field(default_factory=TemporalDecaySettings)
    mmr: MmrSettings = Field(default_factory=MmrSettings)


class ChunkingSettings(Section):
    """``[memory.chunking]``: how files and transcripts are cut for indexing."""

    size: int = Field(default=1200, ge=64)
    """Maximum chunk length in characters (cuts fall on word boundaries)."""
    overlap: int = Field(default=200, ge=0)
    """Characters shared by consecutive chunks."""
    max_file_bytes: int = Field(default=4_000_000, ge=1024)
    """Workspace files larger than this are indexed up to this size (the rest is logged)."""


class EmbeddingSettings(Section):
    """``[memory.embeddings]``: an OpenAI-compatible ``/v1/embeddings`` endpoint."""

    base_url: str | None = None
    """e.g. ``https://api.openai.com/v1``; unset means no semantic search (keyword only)."""
    model: str = "text-embedding-3-small"
    dimensions: int | None = Field(default=None, ge=1)
    """Requested/expected vector size; a response of another size is a mismatch."""
    api_key: Secret | None = None
    batch_size: int = Field(default=64, ge=1, le=2048)
    timeout: float = Field(default=30.0, gt=0)
    cache_ttl_seconds: float = Field(default=86_400.0, ge=0)
    """How long a cached vector is reused (0 = forever)."""
    max_input_chars: int = Field(default=8000, ge=64)
    """Texts are truncated to this before embedding (endpoint token limits)."""
    failure_cooldown_seconds: float = Field(default=30.0, ge=0)
    """After the endpoint fails, searches use keyword only for this long (no waiting on a
    dead endpoint every turn); then the endpoint is tried again."""

    @property
    def configured(self) -> bool:
        return bool(self.base_url)


class MemorySettings(Section):
    """``[memory]``: the memory backend, search and the shared database."""

    backend: Literal["memory", "sql"] = "sql"
    """``memory`` keeps entries in process (lost on restart); ``sql`` uses the database."""
    database_url: str | None = None
    """SQLAlchemy URL of the shared database; ``BEAMCLAW_DATABASE_URL`` wins. Default:
    SQLite at ``$BEAMCLAW_HOME/beamclaw.db``."""
    index_transcripts: bool = True
    """Index conversations (people's and the agent's messages) for memory search after
    each turn. The keyword index lives in memory and grows with what it indexes: about
    1.4 KB per message (measured: 4,000 messages, 5.5 MB). Off: only MEMORY.md, the daily
    logs and stored memories are searched."""
    auto_context: bool = True
    """Inject the top memories for the user's message as a system message each turn
    (one incremental workspace index pass and one search, bounded by the deadline)."""
    auto_context_limit: int = Field(default=3, ge=1, le=20)
    auto_context_max_tokens: int = Field(default=1_500, ge=50)
    """Token budget of the injected block (estimated): hits that do not fit are left out."""
    auto_context_deadline_ms: int = Field(default=300, ge=1)
    """How long a turn waits for the search; a slower search is skipped for that turn (it
    finishes in the background and is never waited for)."""
    max_value_chars: int = Field(default=200_000, ge=1)
    """Largest value ``store`` accepts (the tool reports an error beyond it)."""
    search: SearchSettings = Field(default_factory=SearchSettings)
    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings)
    embeddings: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
