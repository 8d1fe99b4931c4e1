"""The phrase tables of the template teacher: titles and geometric facts per operator, and sentence frames.

Every entry is written for this package (the operator registry's one-line meanings,
:data:`geodsl.OPERATORS`, are the starting point, reworded several ways). A fact is a declarative
clause that reads after "since" or "recall that" and, capitalised, on its own. Keys are the operator
name, optionally specialised: ``"Op/k"`` for ``k`` operands, ``"Op@context"`` for a context the
template teacher reads off the step (``Sum@180``: the parts add up to 180; ``Equal@angle``: the two
quantities are angles). A lookup tries the most specific key first.

Changing any table changes the teacher's replies, and its model name (a hash of these tables is
part of it), so cached replies and finished CoT stages are not reused across such a change.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = (
    "ANSWER_FRAMES",
    "EQUAL_FRAMES",
    "FACTS",
    "FACT_FRAMES",
    "GROUND_FRAMES",
    "INTRO_LINES",
    "JOINT_FRAMES",
    "KNOWN_FRAMES",
    "OPEN_FRAMES",
    "PENDING_FRAMES",
    "PRINT_FRAMES",
    "RESULT_FRAMES",
    "ROLE_FRAMES",
    "SOLVE_FRAMES",
    "TITLES",
    "TITLE_FRAMES",
)

_T = tuple[str, ...]

TITLES: Mapping[str, _T] = MappingProxyType(
    {
        "Get": ("Answer", "Read off the answer", "Report the result"),
        "Sum": ("Add the parts", "Sum of the parts", "Combine the pieces"),
        "Sum@180": ("Angles making 180 degrees", "Use the 180-degree sum", "Supplementary angles"),
        "Sum@360": ("A full turn of 360 degrees", "Use the 360-degree sum", "Angles around the figure"),
        "Sum@90": ("Complementary angles", "Angles making a right angle", "Use the 90-degree sum"),
        "Multiple": ("Scale by a factor", "Use the multiplicative relation", "Product of the factors"),
        "Equal": ("Equal quantities", "Set the two measures equal", "Use the equality"),
        "Equal@angle": ("Congruent angles", "Equal angle measures", "Match the two angles"),
        "Equal@length": ("Congruent segments", "Equal lengths", "Match the two segments"),
        "Iso_Tri_Ang": (
            "Angles of the isosceles triangle",
            "Base angles of an isosceles triangle",
            "Isosceles angle sum",
        ),
        "Gougu": ("Pythagorean theorem", "Use Pythagoras", "Right-triangle side lengths"),
        "Gsin": ("Sine ratio", "Use the sine of the angle", "Right-triangle trigonometry with the sine"),
        "Gcos": (
            "Cosine ratio",
            "Use the cosine of the angle",
            "Right-triangle trigonometry with the cosine",
        ),
        "Gtan": (
            "Tangent ratio",
            "Use the tangent of the angle",
            "Right-triangle trigonometry with the tangent",
        ),
        "Cos_Law": ("Law of cosines", "Use the cosine rule", "Side from two sides and the included angle"),
        "Sin_Law": ("Law of sines", "Use the sine rule", "Sides and their opposite angles"),
        "Median": ("Midsegment of the trapezoid", "Average of the parallel sides", "Trapezoid median"),
        "Geo_Mean": ("Geometric mean", "Geometric-mean relation", "Mean proportional"),
        "Proportion": ("Equal ratios", "Set up a proportion", "Proportional parts"),
        "Proportion/5": ("Ratio raised to a power", "Scaling of similar figures", "Powered proportion"),
        "Ratio": ("Use the ratio", "A given ratio", "Ratio of two quantities"),
        "Chord2_Ang": (
            "Angle between two chords",
            "Chords crossing inside the circle",
            "Interior angle and arcs",
        ),
        "TanSec_Ang": ("Angle outside the circle", "Tangent and secant angle", "Exterior angle and arcs"),
        "Tria_BH_Area": ("Triangle area", "Area from base and height", "Half of base times height"),
        "Tria_SAS_Area": (
            "Triangle area from two sides and an angle",
            "Area with the included angle",
            "Side-angle-side area",
        ),
        "PRK_Perim": ("Perimeter", "Perimeter from two adjacent sides", "Add up the sides"),
        "Para_Area": ("Parallelogram area", "Base times height", "Area of the parallelogram"),
        "Rect_Area": ("Rectangle area", "Length times width", "Area of the rectangle"),
        "Rhom_Area": ("Rhombus area", "Area from the half diagonals", "Area of the rhombus"),
        "Kite_Area": ("Kite area", "Area from the diagonals", "Area of the kite"),
        "Trap_Area": ("Trapezoid area", "Mean base times height", "Area of the trapezoid"),
        "Circle_R_Circum": (
            "Circumference from the radius",
            "Perimeter of the circle",
            "Length around the circle",
        ),
        "Circle_R_Circum/3": (
            "Arc length",
            "Length of the arc from the radius",
            "Arc as a part of the circle",
        ),
        "Circle_D_Circum": (
            "Circumference from the diameter",
            "Perimeter of the circle",
            "Length around the circle",
        ),
        "Circle_D_Circum/3": (
            "Arc length",
            "Length of the arc from the diameter",
            "Arc as a part of the circle",
        ),
        "Circle_R_Area": ("Area of the circle", "Disc area from the radius", "Area enclosed by the circle"),
        "Circle_R_Area/3": ("Sector area", "Area of the sector", "Sector as a part of the disc"),
        "Circle_D_Area": ("Area of the circle", "Disc area from the diameter", "Area enclosed by the circle"),
        "Circle_D_Area/3": (
            "Sector area",
            "Area of the sector from the diameter",
            "Sector as a part of the disc",
        ),
        "ArcSeg_Area": ("Area of the circular segment", "Sector minus triangle", "Segment of the circle"),
        "Ngon_Angsum": ("Interior angle sum", "Angle sum of the polygon", "Polygon angles"),
        "RNgon_B_Area": ("Regular polygon area", "Area from the side length", "Area of the regular polygon"),
        "RNgon_L_Area": ("Regular polygon area", "Area from the circumradius", "Area of the regular polygon"),
        "RNgon_H_Area": ("Regular polygon area", "Area from the apothem", "Area of the regular polygon"),
    }
)
"""Step titles (CoT-Program) and rationale openers (CoT-PAL), per operator key."""

FACTS: Mapping[str, _T] = MappingProxyType(
    {
        "Get": (
            "the last quantity found is the one the question asks for",
            "the value asked for is now known",
            "nothing remains to compute",
        ),
        "Sum": (
            "the parts together make up the whole, so their measures add up to the total",
            "a whole is the sum of the pieces it is split into",
            "adding the pieces gives the measure of the whole",
        ),
        "Sum@180": (
            "angles that together form a straight angle, like the three angles of a triangle, add up to "
            "180 degrees",
            "a straight angle and the angle sum of a triangle are both 180 degrees",
            "the angles involved fill 180 degrees, a straight line or a triangle's interior",
        ),
        "Sum@360": (
            "angles all the way around a point, the angles of a quadrilateral and the arcs of a whole "
            "circle each add up to 360 degrees",
            "a full turn measures 360 degrees",
            "the parts complete a full turn of 360 degrees",
        ),
        "Sum@90": (
            "complementary angles, such as the two acute angles of a right triangle, add up to 90 degrees",
            "the parts fill a right angle, so they total 90 degrees",
            "two angles that make up a right angle sum to 90 degrees",
        ),
        "Multiple": (
            "the product of the factors equals the last quantity",
            "one quantity is a fixed multiple of another",
            "multiplying the factors gives the product",
        ),
        "Equal": (
            "the two quantities have the same measure",
            "the two measures are equal",
            "one quantity equals the other",
        ),
        "Equal@angle": (
            "the two angles are congruent, so their measures are equal",
            "the two angles have the same measure",
            "both angles measure the same",
        ),
        "Equal@length": (
            "the two segments are congruent, so their lengths are equal",
            "the two segments have the same length",
            "both segments are equally long",
        ),
        "Iso_Tri_Ang": (
            "the two base angles of an isosceles triangle are equal, so the apex angle plus twice a base "
            "angle is 180 degrees",
            "the apex angle and the two equal base angles of an isosceles triangle add up to 180 degrees",
            "an isosceles triangle has equal base angles, and together with the apex angle they fill 180 "
            "degrees",
        ),
        "Gougu": (
            "in a right triangle the squares of the two legs add up to the square of the hypotenuse",
            "leg squared plus leg squared equals hypotenuse squared in a right triangle",
            "the square on the hypotenuse of a right triangle equals the sum of the squares on the legs",
        ),
        "Gsin": (
            "in a right triangle the sine of an acute angle is the opposite side divided by the hypotenuse",
            "sine equals opposite over hypotenuse in a right triangle",
            "the side facing the angle, divided by the hypotenuse, is the sine of that angle",
        ),
        "Gcos": (
            "in a right triangle the cosine of an acute angle is the adjacent side divided by the hypotenuse",
            "cosine equals adjacent over hypotenuse in a right triangle",
            "the leg next to the angle, divided by the hypotenuse, is the cosine of that angle",
        ),
        "Gtan": (
            "in a right triangle the tangent of an acute angle is the opposite side divided by the adjacent "
            "side",
            "tangent equals opposite over adjacent in a right triangle",
            "the leg facing the angle, divided by the leg next to it, is the tangent of that angle",
        ),
        "Cos_Law": (
            "the square of a side equals the sum of the squares of the other two sides minus twice their "
            "product times the cosine of the angle between them",
            "the law of cosines links a side to the two sides that enclose the opposite angle",
            "in any triangle c^2 = a^2 + b^2 - 2ab cos C, with C the angle opposite c",
        ),
        "Sin_Law": (
            "each side of a triangle divided by the sine of the angle opposite it gives the same value",
            "the sides of a triangle are proportional to the sines of their opposite angles",
            "in any triangle the ratio of a side to the sine of its opposite angle is constant",
        ),
        "Median": (
            "the midsegment of a trapezoid is the average of the two parallel sides",
            "the median of a trapezoid is as long as the mean of its bases",
            "the segment joining the midpoints of the legs is half the sum of the bases",
        ),
        "Geo_Mean": (
            "the product of two segments equals the square of a third, as for the altitude to the "
            "hypotenuse or for a tangent and a secant drawn from one point",
            "the middle segment is the geometric mean of the other two, so its square is their product",
            "two segments multiply to the square of the mean proportional between them",
        ),
        "Proportion": (
            "corresponding quantities are in the same ratio, as in similar triangles or lines cut by "
            "parallels",
            "two ratios are equal, so their cross products match",
            "the corresponding parts are proportional",
        ),
        "Proportion/5": (
            "in similar figures the ratio of corresponding lengths, raised to the given power, equals the "
            "ratio of the other measures (areas scale with the square)",
            "areas of similar figures are in the square of the ratio of corresponding sides",
            "a ratio of lengths raised to a power gives the ratio of the derived measures",
        ),
        "Ratio": (
            "the ratio of the two quantities is the given value",
            "dividing one quantity by the other gives the stated ratio",
            "the two quantities stand in a known ratio",
        ),
        "Ratio/4": (
            "the ratio of the two quantities raised to the given power equals the last value",
            "a ratio raised to a power gives the stated value",
            "the powered ratio of the two quantities is known",
        ),
        "Chord2_Ang": (
            "when two chords cross inside a circle, the angle they form is half the sum of the arcs "
            "intercepted by it and its vertical angle",
            "an angle formed by two intersecting chords measures half the sum of the intercepted arcs",
            "the angle between crossing chords is the average of the two arcs they cut off",
        ),
        "TanSec_Ang": (
            "an angle formed outside a circle by tangents or secants measures half the difference of the "
            "far and the near intercepted arcs",
            "the exterior angle is half of the far arc minus the near arc",
            "for two secants or tangents meeting outside a circle, the angle is half the difference of the "
            "arcs they cut",
        ),
        "Tria_BH_Area": (
            "the area of a triangle is half the base times the height",
            "a triangle covers half of the rectangle on its base and height",
            "triangle area equals base times height over two",
        ),
        "Tria_SAS_Area": (
            "the area of a triangle is half the product of two sides and the sine of the angle between them",
            "two sides and their included angle give the area as one half times side times side times sine",
            "the height on one side is the other side times the sine of the included angle, so the area "
            "is half their product with that sine",
        ),
        "PRK_Perim": (
            "opposite sides of a parallelogram or rectangle are equal (and a kite has two pairs of equal "
            "sides), so the perimeter is twice the sum of two adjacent sides",
            "the perimeter counts each of two adjacent sides twice",
            "the perimeter of this quadrilateral is two times the sum of a side and its neighbour",
        ),
        "Para_Area": (
            "the area of a parallelogram is its base times its height",
            "a parallelogram has the area of the rectangle on its base and height",
            "parallelogram area equals base times the perpendicular height",
        ),
        "Rect_Area": (
            "the area of a rectangle is its length times its width",
            "a rectangle's area is the product of two adjacent sides",
            "rectangle area equals length times width",
        ),
        "Rhom_Area": (
            "the diagonals of a rhombus bisect each other at right angles, so its area is twice the product "
            "of the two half diagonals",
            "a rhombus splits into four right triangles on its half diagonals, which together give twice "
            "the product of the half diagonals",
            "rhombus area equals two times the product of its half diagonals",
        ),
        "Kite_Area": (
            "the area of a kite is half the product of its diagonals",
            "a kite's diagonals are perpendicular, so its area is half their product",
            "kite area equals diagonal times diagonal over two",
        ),
        "Trap_Area": (
            "the area of a trapezoid is the mean of its parallel sides times the height",
            "a trapezoid has the area of a rectangle whose width is the average of the bases",
            "trapezoid area equals the sum of the bases times the height over two",
        ),
        "Circle_R_Circum": (
            "the circumference of a circle is two pi times its radius",
            "the length around a circle is 2 pi r",
            "a circle's perimeter grows with its radius as 2 pi r",
        ),
        "Circle_R_Circum/3": (
            "an arc is the fraction central angle / 360 of the whole circumference 2 pi r",
            "the arc length is 2 pi r times the central angle over 360",
            "an arc takes the same share of the circumference as its central angle takes of 360 degrees",
        ),
        "Circle_D_Circum": (
            "the circumference of a circle is pi times its diameter",
            "the length around a circle is pi d",
            "a circle's perimeter is its diameter times pi",
        ),
        "Circle_D_Circum/3": (
            "an arc is the fraction central angle / 360 of the whole circumference pi d",
            "the arc length is pi d times the central angle over 360",
            "an arc takes the same share of the circumference as its central angle takes of 360 degrees",
        ),
        "Circle_R_Area": (
            "the area of a disc is pi times the square of its radius",
            "a circle encloses the area pi r^2",
            "the disc's area is pi r squared",
        ),
        "Circle_R_Area/3": (
            "a sector takes the fraction central angle / 360 of the disc's area pi r^2",
            "the area of a sector is pi r^2 times the central angle over 360",
            "a sector covers the same share of the disc as its central angle takes of 360 degrees",
        ),
        "Circle_D_Area": (
            "the area of a disc is pi times the square of half its diameter",
            "a circle of diameter d encloses the area pi (d/2)^2",
            "the disc's area is pi times the radius squared, the radius being half the diameter",
        ),
        "Circle_D_Area/3": (
            "a sector takes the fraction central angle / 360 of the disc's area pi (d/2)^2",
            "the area of a sector is pi (d/2)^2 times the central angle over 360",
            "a sector covers the same share of the disc as its central angle takes of 360 degrees",
        ),
        "ArcSeg_Area": (
            "a circular segment is the sector minus the triangle formed by the two radii and the chord",
            "the segment's area is the sector's area less the triangle on the chord",
            "cutting the triangle on the chord off the sector leaves the circular segment",
        ),
        "Ngon_Angsum": (
            "the interior angles of a polygon with n sides add up to (n - 2) times 180 degrees",
            "a polygon with n sides splits into n - 2 triangles, so its angles total (n - 2) * 180 degrees",
            "the angle sum of an n-gon is 180 degrees for each of its n - 2 triangles",
        ),
        "RNgon_B_Area": (
            "a regular polygon with n sides of length s has area n s^2 / (4 tan(180/n))",
            "the area of a regular polygon follows from its number of sides and its side length",
            "a regular n-gon splits into n congruent isosceles triangles on its sides, which gives its area "
            "from the side length",
        ),
        "RNgon_L_Area": (
            "a regular n-gon splits into n congruent triangles with two sides equal to the circumradius, "
            "so its area is n r^2 sin(360/n) / 2",
            "the area of a regular polygon follows from its number of sides and the distance from its "
            "centre to a vertex",
            "the n triangles from the centre of a regular polygon to its vertices give its area",
        ),
        "RNgon_H_Area": (
            "the area of a regular polygon is half its perimeter times its apothem, which for n sides is "
            "n a^2 tan(180/n)",
            "the area of a regular polygon follows from its number of sides and its apothem",
            "the n triangles from the centre of a regular polygon, each as high as the apothem, give its area",
        ),
    }
)
"""Role-free geometric facts per operator key (lower-case declarative clauses)."""

TITLE_FRAMES: _T = ("{title}", "{title}: find {target}", "{title} for {target}")
"""CoT-Program step titles; ``{target}`` frames are used only when the step fixes an unknown."""

FACT_FRAMES: _T = ("{Fact}.", "Recall that {fact}.", "We use that {fact}.", "The key fact: {fact}.")
"""A fact as a sentence."""

EQUAL_FRAMES: _T = ("Here {a} equals {b}.", "In this step {a} and {b} are equal.", "We set {a} equal to {b}.")
"""How the two sides of an ``Equal`` step are named."""

ROLE_FRAMES: _T = ("Here {is_list}.", "In this step {is_list}.", "We take {as_list}.")
"""How the operands are matched to the operator's roles (``is_list``: "X is the leg, Y the hypotenuse")."""

SOLVE_FRAMES: _T = ("This gives {solved}.", "Solving yields {solved}.", "Hence {solved}.", "So {solved}.")
"""The unknowns a step fixes, with their values."""

JOINT_FRAMES: _T = (
    "Together with the equations before it this fixes {solved}.",
    "Solved jointly with the earlier relations, this gives {solved}.",
    "With the pending relations this settles {solved}.",
)
"""Unknowns fixed jointly with earlier steps."""

OPEN_FRAMES: _T = (
    "This step alone leaves {unknowns} open until a later step.",
    "Nothing is fixed yet; {unknowns} will follow from the later steps.",
    "The relation is kept for later: it involves the still unknown {unknowns}.",
)
"""A step that leaves its unknowns open."""

ANSWER_FRAMES: _T = (
    'The question asks "{asked}"; that is {quantity}, so the answer is {value}.',
    'The quantity asked for ("{asked}") is {quantity}, which is {value}.',
    'We report {quantity}: {value}, which answers "{asked}".',
)
"""The Get step of a CoT-Program trace (``{value}`` known)."""

GROUND_FRAMES: Mapping[str, _T] = MappingProxyType(
    {
        "perp": (
            "The diagram gives {clause}, so the triangle has a right angle.",
            "From the clauses, {clause}: this is the right angle used here.",
            "The right angle comes from {clause}.",
        ),
        "circle": (
            "The diagram puts the points on a circle: {clause}.",
            "From the clauses, {clause}, so the points lie on one circle.",
            "The circle is the one of {clause}.",
        ),
        "parallel": (
            "The diagram gives {clause}.",
            "From the clauses, {clause}: the lines are parallel.",
            "The parallel lines are those of {clause}.",
        ),
    }
)
"""A diagram clause that supports the step's operator, by kind."""

KNOWN_FRAMES: _T = (
    "The diagram gives {knowns}.",
    "Known here: {knowns}.",
    "The values {knowns} enter this equation.",
    "It uses {knowns}.",
)
"""CoT-PAL: the given quantities that enter an equation."""

PENDING_FRAMES: _T = (
    "This equation alone leaves {unknowns} open; it is solved together with the next one.",
    "Keep this equation and solve it with the following one for {unknowns}.",
    "{unknowns} cannot be fixed yet, so the equation waits for the next step.",
)
"""CoT-PAL: an equation whose solve comes later."""

RESULT_FRAMES: _T = (
    "Solving it gives {targets}.",
    "The equation determines {targets}.",
    "We solve it for {targets}.",
    "This fixes {targets}.",
)
"""CoT-PAL: what the solve right after an equation finds."""

PRINT_FRAMES: _T = (
    'The question asks "{asked}"; print that value.',
    'Answer to "{asked}": print the result with three decimals.',
    'Report the quantity asked for ("{asked}").',
)
"""CoT-PAL: the comment before the final print."""

INTRO_LINES: _T = (
    "",
    "We solve it one step at a time, reading the relations from the diagram.",
    "Step by step, using the relations in the diagram:",
    "Each step below names the fact it uses.",
)
"""An optional first line of a CoT-Program trace."""
