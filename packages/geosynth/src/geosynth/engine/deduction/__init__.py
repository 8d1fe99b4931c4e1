"""Deduction: rules as data compiled to SQL joins, and the loop alternating rule passes with the algebra."""
