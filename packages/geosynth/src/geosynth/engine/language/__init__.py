"""The formal language: relations, shapes, quantities, predicates, construction definitions and problems."""
