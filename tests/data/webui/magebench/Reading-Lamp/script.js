const lamp = document.getElementById('lamp');
const button = document.querySelector('.switch');
button.addEventListener('click', () => {
  const on = lamp.classList.toggle('on');
  lamp.classList.toggle('off', !on);
  button.textContent = on ? 'Switch off' : 'Switch on';
});
const field = document.querySelector('input[name="guest"]');
field.addEventListener('keydown', (event) => {
  if (event.key !== 'Enter' || !field.value.trim()) return;
  const item = document.createElement('li');
  item.textContent = field.value.trim();
  item.dataset.filterBy = 'text';
  item.dataset.evalby = 'text|color|font-size';
  document.getElementById('guests').appendChild(item);
  field.value = '';
});
