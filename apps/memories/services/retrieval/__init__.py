"""Finding memories: composite-scored retrieval and boolean full-text search, both hybrid.

How relevance is computed (also in docs/retrieval.md):
1. Candidates (planner, dense, lexical). The query is embedded once, unprefixed (in a worker thread, while
   the lexical statement runs). Dense candidates are the nearest sector vectors (HNSW, cosine, iterative
   scan so that filters keep enough rows; a boolean search with few matches compares their vectors
   exactly); lexical candidates are the best full-text matches (GIN over a generated tsvector). Their
   union is scored exactly, in one statement (scoring).
2. Dense score: a memory's best cosine similarity over the requested sectors.
3. Lexical score: IDF-weighted term matching (lexical), divided by the best in the pool, so 1.0 is the
   best lexical match of this query.
4. relevance and score: the weights in scoring (DENSE_WEIGHT, LEXICAL_WEIGHT, WITH_QUERY, WITHOUT_QUERY), plus its
   boosts: a label or a date (dates) the query names, and for a retrieval its best hits' words and session neighbours.
Search hits are highlighted (highlight), and every memory returned is accessed (reinforce).

Relative imports inside the package let bench/compare.py load an earlier copy of it beside this one.
"""
from .planner import SEARCH_MIN_SIMILARITY, RetrieveResult, SearchResult, memory_retrieve, memory_search
from .scoring import ScoredMemory

__all__ = ["SEARCH_MIN_SIMILARITY", "RetrieveResult", "ScoredMemory", "SearchResult", "memory_retrieve",
           "memory_search"]
