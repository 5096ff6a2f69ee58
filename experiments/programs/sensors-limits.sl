% Readings of sensors and, on a stream of their own, each sensor's limit, which changes now and then: a reading
% is over when it is above the latest limit of its sensor; a record when it is above every earlier reading.
earlier(T,S) :- reading(T,S,_), reading(T0,S,_), T0 < T.
record(T,S,V) :- reading(T,S,V), earlier(T,S), #count{ T0 : reading(T0,S,V0), T0 < T, V0 >= V } = 0.
newer(T,S,T0) :- reading(T,S,_), limit(T0,S,_), limit(T1,S,_), T0 < T1, T1 <= T.
over(T,S,V) :- reading(T,S,V), limit(T0,S,L), T0 <= T, not newer(T,S,T0), V > L.
#show record/3.
#show over/3.
