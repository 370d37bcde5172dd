-- What an engine reported beyond a run's reservation: recorded for operators, never billed (the
-- reservation is the ceiling of a run's charge). Zero when the engine stayed within it.
ALTER TABLE runs ADD COLUMN unbilled_input_tokens integer NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN unbilled_output_tokens integer NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN unbilled_stu numeric NOT NULL DEFAULT 0;
