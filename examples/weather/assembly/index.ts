import { call, emit, fetch, log, RequestInit } from '@berm/guest';

/** Which city, and how far ahead. */
@json
class ForecastArgs {
  /** The city, by name. */
  city!: string;
  /** How many days, from today. */
  days: u32 = 3;
}

/** One day's weather. */
@json
class Day {
  /** The highest temperature, in °C. */
  high: f64 = 0;
  /** The lowest temperature, in °C. */
  low: f64 = 0;
  /** Whether it rains. */
  rain: bool = false;
}

/** A forecast. */
@json
class Forecast {
  /** The city, as asked. */
  city: string = '';
  /** How the city was located: "geo" (by the geo harness's coordinates) or "name" (geo is not deployed). */
  located_by: string = '';
  /** The days, from today. */
  days: Day[] = [];
  /** How many of them have rain. */
  rainy_days: u32 = 0;
}

/** What api.example.com answers. */
@json
class ApiForecast {
  days: Day[] = [];
}

/** What geo's locate takes and answers. */
@json
class LocateArgs {
  place: string = '';
}

@json
class Place {
  name: string = '';
  latitude: f64 = 0;
  longitude: f64 = 0;
}

/**
 * Rain is forecast in a city.
 * @event
 */
@json
class RainStarted {
  /** The city. */
  city: string = '';
  /** Days from today: 0 is today. */
  day: u32 = 0;
}

/**
 * The weather in a city for the next days.
 * @query
 */
export function forecast(args: ForecastArgs): Forecast {
  const result = new Forecast();
  result.city = args.city;

  // Where the city is: geo answers coordinates, or refuses (not deployed: ask by name), or fails.
  const locate = new LocateArgs();
  locate.place = args.city;
  const located = call('geo', 'locate', locate);
  let query = '&city=' + encodeURIComponent(args.city);
  if (located.ok) {
    const place = located.value<Place>();
    query = '&lat=' + place.latitude.toString() + '&lon=' + place.longitude.toString();
    result.located_by = 'geo';
  } else if (located.refused) {
    log('geo is not reachable (' + located.message + '); asking by name', 'notice');
    result.located_by = 'name';
  } else {
    throw new Error('geo could not locate ' + args.city + ': ' + located.message);
  }

  const init = new RequestInit('GET').header('authorization', 'Bearer {secret:example}').header('accept', 'application/json');
  const answer = fetch('http://api.example.com/v1/forecast?days=' + args.days.toString() + query, init);
  if (!answer.ok) throw new Error('the forecast service was not reached: ' + answer.message);
  const response = answer.get();
  if (response.status != 200) throw new Error('the forecast service answered ' + response.status.toString());
  const type = response.header('content-type');
  if (type === null || !type.startsWith('application/json'))
    throw new Error('the forecast service answered ' + (type === null ? 'no content type' : type) + ', not JSON');

  result.days = response.json<ApiForecast>().days;
  for (let i = 0; i < result.days.length; i++) {
    if (!result.days[i].rain) continue;
    result.rainy_days++;
    const rain = new RainStarted();
    rain.city = args.city;
    rain.day = <u32>i;
    emit(rain);
  }
  return result;
}
