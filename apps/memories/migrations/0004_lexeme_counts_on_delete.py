"""Deletes only decrement lexeme counts that exist; they never insert one.

0002's delete trigger upserted (cube, lexeme) rows with negative counts. When a cube is deleted, Django
deletes its memories and its CubeLexeme rows as siblings in no fixed order: if the counts went first,
the memories' trigger re-created them for the vanishing cube and the commit failed on the foreign key
(deleting a cube, or a user who owns one). A delete can only lower counts its memories once raised, so
it updates the existing rows, locked first in (cube, lexeme) order like every other writer's, and a row
already gone stays gone. Inserts keep the upsert."""
from django.db import migrations

SPLIT = """
CREATE FUNCTION engram_cube_lexemes_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memories_cubelexeme AS stats (cube_id, lexeme, documents)
    SELECT m.cube_id, lexeme, count(*)
    FROM changed AS m CROSS JOIN LATERAL unnest(engram_lexemes_of(m.search_vector)) AS lexeme
    WHERE m.deleted_at IS NULL
    GROUP BY m.cube_id, lexeme
    ORDER BY m.cube_id, lexeme
    ON CONFLICT (cube_id, lexeme) DO UPDATE SET documents = stats.documents + excluded.documents;
    RETURN NULL;
END $$;

CREATE FUNCTION engram_cube_lexemes_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM memories_cubelexeme AS stats
    WHERE (stats.cube_id, stats.lexeme) IN (
        SELECT m.cube_id, lexeme
        FROM changed AS m CROSS JOIN LATERAL unnest(engram_lexemes_of(m.search_vector)) AS lexeme
        WHERE m.deleted_at IS NULL)
    ORDER BY stats.cube_id, stats.lexeme FOR UPDATE;
    UPDATE memories_cubelexeme AS stats SET documents = stats.documents - gone.documents
    FROM (
        SELECT m.cube_id, lexeme, count(*) AS documents
        FROM changed AS m CROSS JOIN LATERAL unnest(engram_lexemes_of(m.search_vector)) AS lexeme
        WHERE m.deleted_at IS NULL
        GROUP BY m.cube_id, lexeme
    ) AS gone
    WHERE stats.cube_id = gone.cube_id AND stats.lexeme = gone.lexeme;
    RETURN NULL;
END $$;

DROP TRIGGER memory_cube_lexemes_insert ON memories_memory;
DROP TRIGGER memory_cube_lexemes_delete ON memories_memory;
CREATE TRIGGER memory_cube_lexemes_insert AFTER INSERT ON memories_memory
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION engram_cube_lexemes_inserted();
CREATE TRIGGER memory_cube_lexemes_delete AFTER DELETE ON memories_memory
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION engram_cube_lexemes_deleted();
DROP FUNCTION engram_cube_lexemes_inserted_or_deleted();
"""

UNSPLIT = """
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
DROP TRIGGER memory_cube_lexemes_insert ON memories_memory;
DROP TRIGGER memory_cube_lexemes_delete ON memories_memory;
CREATE TRIGGER memory_cube_lexemes_insert AFTER INSERT ON memories_memory
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION engram_cube_lexemes_inserted_or_deleted();
CREATE TRIGGER memory_cube_lexemes_delete AFTER DELETE ON memories_memory
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION engram_cube_lexemes_inserted_or_deleted();
DROP FUNCTION engram_cube_lexemes_inserted();
DROP FUNCTION engram_cube_lexemes_deleted();
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0003_alter_memory_kind")]

    operations = [migrations.RunSQL(SPLIT, UNSPLIT)]
