/** What to look up. */
@json
class LocateArgs {
  /** The place's name, in English; case does not matter. */
  place!: string;
}

/** A place and where it is. */
@json
class Place {
  /** The name as the gazetteer spells it. */
  name: string = '';
  /** Degrees north (negative: south). */
  latitude: f64 = 0;
  /** Degrees east (negative: west). */
  longitude: f64 = 0;
}

function place(name: string, latitude: f64, longitude: f64): Place {
  const p = new Place();
  p.name = name;
  p.latitude = latitude;
  p.longitude = longitude;
  return p;
}

const PLACES: Place[] = [
  place('Paris', 48.8566, 2.3522),
  place('Oslo', 59.9139, 10.7522),
  place('Lima', -12.0464, -77.0428),
  place('Nairobi', -1.2921, 36.8219),
];

/**
 * The coordinates of a city. An unknown place is an error.
 * @query
 */
export function locate(args: LocateArgs): Place {
  const wanted = args.place.trim().toLowerCase();
  for (let i = 0; i < PLACES.length; i++) {
    if (PLACES[i].name.toLowerCase() == wanted) return PLACES[i];
  }
  throw new Error('unknown place: ' + args.place);
}
