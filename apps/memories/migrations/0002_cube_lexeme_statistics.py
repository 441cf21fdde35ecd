"""Per-cube document frequencies of lexemes, kept exact by statement-level triggers.

The lexical score weighs each query lexeme by its IDF over the memories in scope. Counted at query
time, those document frequencies would cost reading every match of every query word
(docs/benchmarks.md#retrieve-and-search-latency). These triggers keep the counts as memories are
written instead: one row per (cube, lexeme) with the number of live memories of the cube that contain
it, and the row with lexeme '' holding the number of live memories. Statement-level triggers with
transition tables cost one grouped upsert per statement, so bulk inserts stay cheap; each statement
locks its rows in (cube, lexeme) order, '' first, so concurrent writers to one cube queue instead of
deadlocking."""
from django.db import migrations, models
import django.db.models.deletion

FUNCTIONS = """
CREATE FUNCTION engram_lexemes_of(vector tsvector) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT array_prepend(''::text, tsvector_to_array(coalesce(vector, ''::tsvector))) $$;

-- Inserted rows count +1 and deleted rows -1; both triggers call their transition table "changed".
CREATE FUNCTION engram_cube_lexemes_inserted_or_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memories_cubelexeme AS stats (cube_id, lexeme, documents)
    SELECT m.cube_id, lexeme, CASE TG_OP WHEN 'INSERT' THEN count(*) ELSE -count(*) END
    FROM changed AS m CROSS JOIN LATERAL unnest(engram_lexemes_of(m.search_vector)) AS lexeme
    WHERE m.deleted_at IS NULL
    GROUP BY m.cube_id, lexeme
    ORDER BY m.cube_id, lexeme
    ON CONFLICT (cube_id, lexeme) DO UPDATE SET documents = stats.documents + excluded.documents;
    RETURN NULL;
END $$;

-- An update counts only when it changes what a live memory contributes: its text, its cube, or
-- whether it is live (soft delete and restore). Reinforcement and decay touch none of these.
CREATE FUNCTION engram_cube_lexemes_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memories_cubelexeme AS stats (cube_id, lexeme, documents)
    SELECT cube_id, lexeme, sum(change)
    FROM (
        SELECT n.cube_id, lexeme, 1 AS change
        FROM after_rows AS n JOIN before_rows AS o ON o.id = n.id
             CROSS JOIN LATERAL unnest(engram_lexemes_of(n.search_vector)) AS lexeme
        WHERE n.deleted_at IS NULL
          AND (o.deleted_at IS NOT NULL OR o.cube_id <> n.cube_id OR o.search_vector <> n.search_vector)
        UNION ALL
        SELECT o.cube_id, lexeme, -1
        FROM before_rows AS o JOIN after_rows AS n ON n.id = o.id
             CROSS JOIN LATERAL unnest(engram_lexemes_of(o.search_vector)) AS lexeme
        WHERE o.deleted_at IS NULL
          AND (n.deleted_at IS NOT NULL OR o.cube_id <> n.cube_id OR o.search_vector <> n.search_vector)
    ) AS changes
    GROUP BY cube_id, lexeme
    HAVING sum(change) <> 0 OR lexeme = ''
    ORDER BY cube_id, lexeme
    ON CONFLICT (cube_id, lexeme) DO UPDATE SET documents = stats.documents + excluded.documents;
    RETURN NULL;
END $$;

CREATE TRIGGER memory_cube_lexemes_insert AFTER INSERT ON memories_memory
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION engram_cube_lexemes_inserted_or_deleted();
CREATE TRIGGER memory_cube_lexemes_delete AFTER DELETE ON memories_memory
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION engram_cube_lexemes_inserted_or_deleted();
CREATE TRIGGER memory_cube_lexemes_update AFTER UPDATE ON memories_memory
    REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
    FOR EACH STATEMENT EXECUTE FUNCTION engram_cube_lexemes_updated();

INSERT INTO memories_cubelexeme (cube_id, lexeme, documents)
SELECT m.cube_id, lexeme, count(*)
FROM memories_memory AS m CROSS JOIN LATERAL unnest(engram_lexemes_of(m.search_vector)) AS lexeme
WHERE m.deleted_at IS NULL
GROUP BY m.cube_id, lexeme;
"""

DROP_FUNCTIONS = """
DROP TRIGGER memory_cube_lexemes_insert ON memories_memory;
DROP TRIGGER memory_cube_lexemes_delete ON memories_memory;
DROP TRIGGER memory_cube_lexemes_update ON memories_memory;
DROP FUNCTION engram_cube_lexemes_inserted_or_deleted();
DROP FUNCTION engram_cube_lexemes_updated();
DROP FUNCTION engram_lexemes_of(tsvector);
"""


class Migration(migrations.Migration):

    dependencies = [
        ("cubes", "0001_initial"),
        ("memories", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="CubeLexeme",
            fields=[
                ("pk", models.CompositePrimaryKey("cube_id", "lexeme", blank=True, editable=False, primary_key=True,
                                                  serialize=False)),
                ("lexeme", models.TextField(blank=True)),
                ("documents", models.IntegerField()),
                ("cube", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                           to="cubes.cube")),
            ],
        ),
        migrations.RunSQL(FUNCTIONS, DROP_FUNCTIONS),
    ]
