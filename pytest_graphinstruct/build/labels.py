"""Domain vocabularies for the level-4 references: node labels and edge relations.

Every list here was written for this project (invented names, titles and species; element
symbols are the periodic table's).  Promises:

* **Enough distinct labels.**  Each domain offers at least :data:`MIN_DISTINCT` distinct labels
  (the largest L4 graph has 60 nodes), so a graph's labels can be drawn without replacement and are
  unique within the graph; :func:`draw_labels` does that deterministically from the caller's
  :class:`random.Random`.
* **No digits in names.**  Labels (except molecular atom labels such as ``C3``, which the D2
  scorer reads as element symbols) contain no digits, so the textual scorer never mistakes them
  for numeric placeholders.
* **Valence table.**  :data:`VALENCE` gives the maximum total bond order of each element used in
  molecular references (C 4, N 3, O 2, S 2, halogens and H 1).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import product

#: Every label pool below holds at least this many distinct labels.
MIN_DISTINCT = 60


def _combine(first: Sequence[str], second: Sequence[str], pattern: str) -> tuple[str, ...]:
    """All ``pattern.format(a, b)`` for ``a`` in ``first``, ``b`` in ``second`` (in order)."""
    return tuple(pattern.format(a, b) for a, b in product(first, second))


# -- social: people --------------------------------------------------------------------------------

_GIVEN = ("Ayla", "Bram", "Calla", "Dorian", "Elsie", "Fenn", "Greta", "Hollis", "Ines", "Jory",
          "Kaia", "Lorne", "Mirela", "Nico", "Odile", "Pax", "Quilla", "Rafe", "Sunniva", "Tobin",
          "Ulla", "Vesper", "Wren", "Yusra")
_FAMILY = ("Ashdown", "Brightwater", "Corrigan", "Delacourt", "Everly", "Fairholm", "Garrow",
           "Huxtable")
#: People's names (given × family name).
PEOPLE: tuple[str, ...] = _combine(_GIVEN, _FAMILY, "{} {}")

# -- citation: paper titles ------------------------------------------------------------------------

_METHODS = ("Sparse Attention", "Contrastive Pretraining", "Graph Diffusion", "Bayesian Pruning",
            "Curriculum Distillation", "Spectral Embedding", "Causal Probing",
            "Federated Fine-Tuning", "Low-Rank Adapters", "Energy-Based Ranking",
            "Neural Program Repair", "Active Relabelling")
_PROBLEMS = ("Protein Docking", "Traffic Forecasting", "Legal Retrieval", "Crop Monitoring",
             "Speech Separation", "Code Search", "Seismic Imaging", "Molecule Design",
             "Dialogue Grounding", "Fraud Detection", "Satellite Tracking", "Music Tagging")
#: Paper titles ("<method> for <problem>").
PAPER_TITLES: tuple[str, ...] = _combine(_METHODS, _PROBLEMS, "{} for {}")

# -- biological: proteins --------------------------------------------------------------------------

_PROTEIN_STEMS = ("Arvin", "Belox", "Corvan", "Dyrin", "Elpha", "Fostin", "Galvo", "Hemix",
                  "Isotan", "Jurin", "Kelbo", "Lumen", "Mortin", "Nexal", "Orpin")
_PROTEIN_FAMILIES = ("kinase", "phosphatase", "receptor", "ligase", "transporter", "helicase",
                     "synthase", "binding factor")
#: Invented protein names ("<stem> <family>").
PROTEINS: tuple[str, ...] = _combine(_PROTEIN_STEMS, _PROTEIN_FAMILIES, "{} {}")

# -- ecological: producers and consumers -----------------------------------------------------------

_PLANT_ADJ = ("Marsh", "Dwarf", "Creeping", "Golden", "Bladder", "Silver", "Tufted", "Floating",
              "Dune", "Red")
_PLANTS = ("Sedge", "Kelp", "Clover", "Moss", "Reed", "Diatom", "Fern", "Algae")
#: Primary producers (plants, algae).
PRODUCERS: tuple[str, ...] = _combine(_PLANT_ADJ, _PLANTS, "{} {}")

_ANIMAL_ADJ = ("Spotted", "Banded", "Pale", "Crested", "Striped", "Dusky", "Horned", "Ringed",
               "Long-tailed", "Copper")
_ANIMALS = ("Minnow", "Heron", "Beetle", "Vole", "Owl", "Frog", "Shrew", "Trout", "Mantis",
            "Weasel", "Snail", "Kestrel")
#: Consumers (animals).
CONSUMERS: tuple[str, ...] = _combine(_ANIMAL_ADJ, _ANIMALS, "{} {}")

# -- communication: devices ------------------------------------------------------------------------

_SITES = ("oslo", "lima", "porto", "kyoto", "dakar", "quito", "perth", "turin", "accra", "hanoi",
          "bergen", "cusco", "malmo", "fresno", "tromso", "galway", "sapporo", "tunis", "denver",
          "aarhus")
_ROLES = ("core-router", "edge-router", "access-switch", "firewall", "gateway", "relay",
          "access-point", "dns-server")
#: Network devices ("<site>-<role>").
DEVICES: tuple[str, ...] = _combine(_SITES, _ROLES, "{}-{}")
#: Link media of communication edges, with relative weights (fiber most common).
LINK_MEDIA: tuple[tuple[str, int], ...] = (("fiber_link", 6), ("copper_link", 3),
                                           ("microwave_link", 1))

# -- infrastructure: stations and intersections ----------------------------------------------------

_STATION_STEMS = ("Alder", "Beacon", "Cinder", "Dockside", "Elmstead", "Foundry", "Gallows Hill",
                  "Harbour", "Ironbridge", "Juniper", "Kingsmead", "Larkfield", "Millpond",
                  "Northgate", "Orchard", "Pinewood", "Quarry", "Riverside", "Saltmarsh",
                  "Tanner's Row")
_STATION_SUFFIXES = ("Central", "Square", "Park", "Junction", "Halt", "Cross")
#: Transit station names.
STATIONS: tuple[str, ...] = _combine(_STATION_STEMS, _STATION_SUFFIXES, "{} {}")

_STREETS = ("Ash St", "Birch Ave", "Cedar Rd", "Dover Ln", "Ember Way", "Flint St", "Grove Ave",
            "Hazel Rd", "Iris Ln", "Jasper St", "Kiln Ave", "Linden Rd", "Maple Way", "Nettle St")
#: Road intersections ("<street> & <street>").
INTERSECTIONS: tuple[str, ...] = tuple(f"{a} & {b}" for i, a in enumerate(_STREETS)
                                       for b in _STREETS[i + 1:])

# -- knowledge graph: typed entities and relations -------------------------------------------------

#: Entity type → names of that type.
KG_ENTITIES: dict[str, tuple[str, ...]] = {
    "person": _combine(("Marisol", "Teodor", "Ingrid", "Caspian", "Leontine", "Amadou", "Sorcha",
                        "Haruki", "Beatrix", "Emeric"),
                       ("Vance", "Okafor", "Lindqvist", "Moreau", "Szabo", "Quintero"), "{} {}"),
    "organization": ("Halvorsen Institute", "Brightline Labs", "Crescent Press", "Ostrava Works",
                     "Meridian Observatory", "Tallow & Finch", "Northwind Trust",
                     "Copperleaf Foundation", "Veldt Robotics", "Saffron Bank",
                     "Lantern Theatre", "Greyhaven College", "Anvil Foundry", "Kestrel Airways",
                     "Bluewater Museum", "Orison Records", "Thistle Hospital", "Granary Guild",
                     "Palisade University", "Mosaic Studios", "Iron Gate Council",
                     "Harrowgate Mills", "Juniper Clinic", "Solace Pharmaceuticals",
                     "Quillon Publishing", "Redfern Orchestra", "Starling Union",
                     "Umber Shipping", "Wicklow Academy", "Zephyr Motors",
                     "Eastmarch Railways", "Fable Games", "Cobalt Mining Company",
                     "Lumen Library", "Nightjar Records", "Ptarmigan Press", "Rookery Ballet",
                     "Sable Insurance", "Tidewater Ferries", "Vireo Telecom"),
    "place": ("Valmora", "Keswin", "Port Ardent", "Lake Sorrel", "Brindle Valley", "Castellane",
              "Drummore", "Eskerfield", "Fallowmere", "Glenrock", "Hollin Bay", "Isle of Tarn",
              "Jessamine", "Kilbride Heights", "Lowmarsh", "Mount Ferro", "Northreach", "Oxley",
              "Pellucid Coast", "Quarrendon", "Ravensholt", "Saltcombe", "Thornbury", "Upwick",
              "Verrin", "Westerhythe", "Yarrowby", "Zennor Point", "Amberley Downs",
              "Blackwater Fen", "Cinderford", "Dunmore Isles", "Elderhaven", "Farrowdale",
              "Greymantle", "Highfold", "Ivybridge", "Larkspur Plain", "Moorgate", "Nethercott"),
    "work": ("The Glass Orchard", "Songs of the Lowland", "A Grammar of Tides",
             "The Copper Atlas", "Winter Ledger", "Notes on Salt", "The Ninth Lantern",
             "Cartography of Silence", "The Quiet Engine", "Harvest Variations",
             "Letters from Verrin", "The Moth Parliament", "Ember and Ash", "A Field of Wrens",
             "The Tin Cartographer", "Dust Symphony", "Ledger of Birds", "The Hollow Crown Suite",
             "Paper Lighthouses", "The Longest Thaw", "Orchard Sonata", "Maps for the Drowned",
             "The Weaver's Theorem", "Saltwater Hymns", "A Study in Umber", "The Marble Choir",
             "Night Ferry", "Threnody for Rivers", "The Cobalt Year", "Kestrel Elegies",
             "Small Hours", "The Lantern Trials", "Bright Meridian", "Fen Chronicles",
             "The Iron Almanac", "Foxglove Nocturne", "Riddle of the Pass",
             "The Cartwright Letters", "Blue Hour Etudes", "Stone and Starlight"),
    "concept": ("Entropy", "Gravitation", "Photosynthesis", "Game Theory", "Impressionism",
                "Topology", "Plate Tectonics", "Natural Selection", "Cryptography",
                "Baroque Counterpoint", "Supply Chains", "Quantum Tunnelling", "Epigenetics",
                "Stoicism", "Urban Planning", "Glaciology", "Linguistic Relativity",
                "Bioluminescence", "Number Theory", "Minimalism", "Thermodynamics",
                "Immunology", "Cartography", "Harmonic Analysis", "Oral History",
                "Symbiosis", "Machine Translation", "Volcanology", "Ethnobotany",
                "Public Health", "Fluid Dynamics", "Rhetoric", "Metallurgy", "Astrometry",
                "Land Reform", "Ornithology", "Semiotics", "Cybernetics", "Hydrology",
                "Folk Music"),
}
#: (subject type, object type) → relation names used for edges subject → object.
KG_RELATIONS: dict[tuple[str, str], tuple[str, ...]] = {
    ("person", "organization"): ("works_for", "founded", "member_of"),
    ("person", "place"): ("born_in", "lives_in"),
    ("person", "work"): ("authored", "performed_in"),
    ("person", "person"): ("married_to", "mentored", "sibling_of"),
    ("organization", "place"): ("headquartered_in", "operates_in"),
    ("work", "concept"): ("about", "explores"),
    ("work", "person"): ("dedicated_to", "depicts"),
    ("organization", "concept"): ("specializes_in", "funds_research_on"),
    ("concept", "concept"): ("subfield_of", "influenced"),
    ("place", "place"): ("located_in", "borders"),
}

# -- molecular: elements ---------------------------------------------------------------------------

#: Maximum total bond order per element.
VALENCE: dict[str, int] = {"C": 4, "N": 3, "O": 2, "S": 2, "F": 1, "Cl": 1, "Br": 1, "H": 1}
#: Node degree → (element, weight) choices for a heavy atom of that degree (hydrogens implicit).
ELEMENTS_BY_DEGREE: dict[int, tuple[tuple[str, int], ...]] = {
    1: (("C", 12), ("O", 4), ("N", 3), ("F", 1), ("Cl", 2), ("Br", 1)),
    2: (("C", 14), ("O", 3), ("N", 2), ("S", 1)),
    3: (("C", 8), ("N", 2)),
    4: (("C", 1),),
}


def draw_labels(rng: random.Random, vocabulary: Sequence[str], k: int) -> list[str]:
    """``k`` distinct labels from ``vocabulary`` (raises ``ValueError`` when it is too small)."""
    if k > len(vocabulary):
        raise ValueError(f"need {k} distinct labels, the vocabulary has {len(vocabulary)}")
    return rng.sample(list(vocabulary), k)


def weighted_choice(rng: random.Random, options: Sequence[tuple[str, int]]) -> str:
    """One name from ``(name, weight)`` options, chosen with probability ∝ weight."""
    names = [name for name, _ in options]
    weights = [w for _, w in options]
    return rng.choices(names, weights=weights, k=1)[0]
