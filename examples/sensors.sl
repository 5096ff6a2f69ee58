% Per-sensor records over a stream of readings (Zaniolo, "A Logic-Based Language for Data Streams").
% reading(T,S,V): at timestamp T sensor S reads V.
% record(T,S,V): the reading is above every earlier reading of its sensor, and there was one.
% Every atom carries the sensor S at argument 2: the program runs keyed by S (srtopo compile prints the key).
earlier(T,S) :- reading(T,S,_), reading(T0,S,_), T0 < T.
record(T,S,V) :- reading(T,S,V), earlier(T,S), #count{ T0 : reading(T0,S,V0), T0 < T, V0 >= V } = 0.
#show record/3.
